/// Pages through a paged endpoint (HHNetworkAPIRecorder): ``refresh()`` loads the first page,
/// ``loadMore()`` the next one; ``hasMore``, ``currentPage`` and ``total`` follow the server's answers.
/// Overlapping ``loadMore()`` calls share one request, and a refresh supersedes a running ``loadMore()``.
///
/// ```swift
/// let pager = Pager(client: client, pageSize: 20) { page, size in
///     Endpoint(name: "users", module: users, path: "/users",
///              query: [QueryItem("page", "\(page)"), QueryItem("size", "\(size)")])
/// }
/// let first = try await pager.refresh()
/// while await pager.hasMore { _ = try await pager.loadMore() }
/// print(await pager.items.count, await pager.total ?? 0)
/// ```
public actor Pager {
    /// Where a page's parts are in the decoded response.
    public struct Layout: Sendable {
        /// Dotted path to the page's item array.
        public var itemsPath: String
        /// Dotted path to the total number of items (nil: none).
        public var totalPath: String?
        /// Dotted path to a "has more" boolean (nil: inferred from the total or a short page).
        public var hasMorePath: String?
        /// The first page's number.
        public var firstPage: Int

        /// `data.items`, `data.total`, no "has more" field, pages counted from 1.
        public init() {
            itemsPath = "data.items"
            totalPath = "data.total"
            hasMorePath = nil
            firstPage = 1
        }
    }

    /// The client.
    public nonisolated let client: Client
    /// Items per page.
    public nonisolated let pageSize: Int
    /// The layout.
    public nonisolated let layout: Layout
    private let makeEndpoint: @Sendable (_ page: Int, _ size: Int) -> Endpoint

    /// Every item loaded so far.
    public private(set) var items: [Value] = []
    /// The last page loaded (nil before the first).
    public private(set) var currentPage: Int?
    /// The total the server reported.
    public private(set) var total: Int?
    /// Whether another page is expected.
    public private(set) var hasMore = true

    private var loadingMore: Task<[Value], any Error>?
    private var refreshing: Task<[Value], any Error>?
    private var generation = 0

    /// A pager building each page's endpoint with `endpoint(page, size)`.
    public init(
        client: Client, pageSize: Int, layout: Layout = Layout(),
        endpoint: @escaping @Sendable (_ page: Int, _ size: Int) -> Endpoint
    ) {
        self.client = client
        self.pageSize = pageSize
        self.layout = layout
        self.makeEndpoint = endpoint
    }

    /// Loads the first page and replaces the items with it; returns them. Cancels a running ``loadMore()``.
    @discardableResult
    public func refresh() async throws -> [Value] {
        if let refreshing { return try await refreshing.value }
        generation += 1
        loadingMore?.cancel()
        loadingMore = nil
        let task = Task { try await self.load(page: layout.firstPage, replacing: true) }
        refreshing = task
        defer { if refreshing == task { refreshing = nil } }
        return try await task.value
    }

    /// Loads the next page and appends it; returns the new items (none when ``hasMore`` is false).
    /// Calls made while one is running share its request and result.
    @discardableResult
    public func loadMore() async throws -> [Value] {
        if let loadingMore { return try await loadingMore.value }
        if let refreshing { _ = try await refreshing.value }
        if let loadingMore { return try await loadingMore.value }
        guard hasMore else { return [] }
        let page = currentPage.map { $0 + 1 } ?? layout.firstPage
        let task = Task { try await self.load(page: page, replacing: false) }
        loadingMore = task
        defer { if loadingMore == task { loadingMore = nil } }
        return try await task.value
    }

    /// Cancels the running page request, if any.
    public func cancel() {
        generation += 1
        loadingMore?.cancel()
        refreshing?.cancel()
    }

    private func load(page: Int, replacing: Bool) async throws -> [Value] {
        let started = generation
        let reply = try await client.send(makeEndpoint(page, pageSize))
        guard started == generation else {
            throw CourierError(.cancelled, detail: "the page request was superseded")
        }
        let value = reply.value
        guard let pageItems = value[path: CacheInterceptor.path(layout.itemsPath)]?.arrayValue else {
            throw CourierError(.missingValue, detail: "the page has no item list at \(layout.itemsPath)")
        }
        if replacing { items = [] }
        items += pageItems
        currentPage = page
        if let path = layout.totalPath, let reported = value[path: CacheInterceptor.path(path)]?.int64Value {
            total = Int(reported)
        }
        if let path = layout.hasMorePath, let flag = value[path: CacheInterceptor.path(path)]?.boolValue {
            hasMore = flag
        } else if let total {
            hasMore = items.count < total && !pageItems.isEmpty
        } else {
            hasMore = pageItems.count >= pageSize
        }
        return pageItems
    }
}
