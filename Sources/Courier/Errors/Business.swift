/// A module's own business errors: the enumerated meaning of the `code` field its server answers with.
///
/// ```swift
/// enum UserError: Int, BusinessError {
///     case userNotFound = 301
///     case nameTaken = 302
///
///     var message: String {
///         switch self {
///         case .userNotFound: "The user does not exist."
///         case .nameTaken: "That name is already taken."
///         }
///     }
/// }
/// // Other languages, one table each (see MessageCatalog):
/// MessageCatalog.update(.simplifiedChinese) {
///     $0.setMessages([UserError.userNotFound: "用户不存在~", .nameTaken: "用户名已被占用~"])
/// }
/// ```
public protocol BusinessError: Error, Sendable {
    /// The server's business code for this case.
    var businessCode: Int { get }
    /// A readable message in English, the fallback of every language; other languages come from the
    /// ``MessageCatalog`` (``MessageTable/setMessages(_:)``).
    var message: String { get }
}

extension BusinessError where Self: RawRepresentable, RawValue == Int {
    public var businessCode: Int { rawValue }
}

/// The business failure carried by a ``CourierError`` of category ``CourierError/Category/business`` (and by
/// an HTTP error whose body also held a business code), attached as a ``CourierError/Detail``: its message
/// is the error's sentence.
public struct BusinessFailure: CourierError.Detail {
    /// The server's code.
    public var code: Int
    /// The server's own message, if it sent one.
    public var serverMessage: String?
    /// The module's enum case, when the module mapped the code.
    public var mapped: (any BusinessError)?

    /// A failure.
    public init(code: Int, serverMessage: String?, mapped: (any BusinessError)?) {
        self.code = code
        self.serverMessage = serverMessage
        self.mapped = mapped
    }

    /// The readable message: the module's, else the server's, else a generic one with the code.
    public func message(in language: CourierError.Language) -> String {
        if let mapped { return MessageCatalog.message(for: mapped, in: language) }
        if let serverMessage, !serverMessage.isEmpty {
            return MessageCatalog.compose(
                \.serverReportedError, in: language, ["code": "\(code)", "message": serverMessage])
        }
        return MessageCatalog.compose(\.serverReportedCode, in: language, ["code": "\(code)"])
    }

    /// The failure's message stands for the whole error.
    public func sentence(in language: CourierError.Language) -> String? { message(in: language) }
}

extension CourierError {
    /// The business failure, for ``Category/business`` errors: the server's code and message and the
    /// module's own enum case, if the module mapped it (the ``BusinessFailure`` in ``details``).
    public var businessFailure: BusinessFailure? {
        get { details[BusinessFailure.self] }
        set { details[BusinessFailure.self] = newValue }
    }

    /// The business error the module mapped, as its own enum.
    ///
    /// ```swift
    /// if let userError = error.business(as: UserError.self) { ... }
    /// ```
    public func business<E: BusinessError>(as type: E.Type) -> E? {
        businessFailure?.mapped as? E
    }
}

/// How a module reads business results: where the code and message live in a response, which codes mean
/// success, and how codes map to the module's ``BusinessError`` enum.
///
/// ```swift
/// let rule = BusinessRule(mapping: UserError.self)          // reads "code" and "message"
/// var custom = BusinessRule(codePath: ["status", "code"], messagePath: ["status", "msg"], successCodes: [200])
/// ```
public struct BusinessRule: Sendable {
    /// Path to the integer code in the decoded response.
    public var codePath: [PathComponent]
    /// Path to the server's message.
    public var messagePath: [PathComponent]
    /// Codes that mean success.
    public var successCodes: Set<Int>
    private var mapper: @Sendable (Int) -> (any BusinessError)?

    /// A rule with no enum mapping: every failure code becomes a generic business error.
    public init(
        codePath: [PathComponent] = ["code"], messagePath: [PathComponent] = ["message"],
        successCodes: Set<Int> = [0, 200]
    ) {
        self.codePath = codePath
        self.messagePath = messagePath
        self.successCodes = successCodes
        self.mapper = { _ in nil }
    }

    /// A rule that maps codes to the cases of `type` by raw value.
    public init<E: BusinessError & RawRepresentable>(
        mapping type: E.Type, codePath: [PathComponent] = ["code"], messagePath: [PathComponent] = ["message"],
        successCodes: Set<Int> = [0, 200]
    ) where E.RawValue == Int {
        self.init(codePath: codePath, messagePath: messagePath, successCodes: successCodes)
        self.mapper = { E(rawValue: $0) }
    }

    /// A rule with a custom mapping function.
    public init(
        codePath: [PathComponent] = ["code"], messagePath: [PathComponent] = ["message"],
        successCodes: Set<Int> = [0, 200], map: @escaping @Sendable (Int) -> (any BusinessError)?
    ) {
        self.init(codePath: codePath, messagePath: messagePath, successCodes: successCodes)
        self.mapper = map
    }

    /// The business failure `value` reports, or `nil` when it has no code or a success code.
    public func failure(in value: Value) -> BusinessFailure? {
        guard let code = value[path: codePath]?.int64Value.map(Int.init), !successCodes.contains(code) else {
            return nil
        }
        return BusinessFailure(code: code, serverMessage: value[path: messagePath]?.stringValue, mapped: mapper(code))
    }
}
