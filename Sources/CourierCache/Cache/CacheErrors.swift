extension CourierError.Code {
    /// The result is only available from a cache and the cache has none (a ``CachePolicy`` that reads only
    /// the cache, or a cached response that can no longer be read). Number 9005, category
    /// `CourierError.Category.configuration`; declared by CourierCache.
    public static let cacheMiss = CourierError.Code(module: 9005, name: "cacheMiss", messages: [
        .english: "No cached response is available.",
        .simplifiedChinese: "没有可用的缓存数据~",
    ])
}
