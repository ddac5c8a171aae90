extension CourierError.Code {
    /// A replay transport has no recorded exchange for the request (its method and URL are in the detail).
    /// Number 9007, category `CourierError.Category.configuration`; declared by CourierTesting.
    public static let noRecordedExchange = CourierError.Code(module: 9007, name: "noRecordedExchange", messages: [
        .english: "No recorded exchange matches the request.",
        .simplifiedChinese: "没有与该请求匹配的录制记录~",
    ])

    /// The codes a cassette can name: the core's and CourierTesting's own.
    static var cassetteCodes: [CourierError.Code] { allCases + [.noRecordedExchange] }
}
