extension CourierError {
    /// A language of Courier's messages, by BCP 47 identifier (`en`, `zh-Hans`, `ja`, `pt-BR`, `de-CH`).
    /// Any identifier works: a message is looked up for the most specific tag first (`de-CH`, then `de`),
    /// and in English when no table has it. `zh`, `zh-CN`, `zh-SG` and `zh-Hans-…` read the Simplified Chinese
    /// table.
    ///
    /// ```swift
    /// error.message(in: .simplifiedChinese)
    /// error.message(in: "ja-JP")        // Japanese when registered, else English
    /// ```
    public struct Language: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
        /// The identifier, normalised: lowercase, `-` between subtags.
        public let identifier: String

        /// A language from a BCP 47 identifier or a POSIX locale name (`zh_CN`).
        public init(_ identifier: String) {
            var normalised = identifier.lowercased().replacing("_", with: "-")
            if let dot = normalised.firstIndex(of: ".") { normalised = String(normalised[..<dot]) }   // en_US.UTF-8
            self.identifier = normalised
        }

        public init(stringLiteral value: String) { self.init(value) }

        /// English (`en`).
        public static let english = Language("en")
        /// Simplified Chinese (`zh-Hans`).
        public static let simplifiedChinese = Language("zh-Hans")

        public var description: String { identifier }

        /// The identifiers to look up, most specific first (`zh-hant-tw`, `zh-hant`, `zh`), with the usual
        /// Chinese aliases.
        var lookupOrder: [String] {
            var order: [String] = []
            var subtags = identifier.split(separator: "-").map(String.init)
            while !subtags.isEmpty {
                order.append(subtags.joined(separator: "-"))
                subtags.removeLast()
            }
            if identifier == "zh" || ["zh-cn", "zh-sg", "zh-my"].contains(where: { identifier.hasPrefix($0) }) {
                order.insert("zh-hans", at: order.count - 1)
            } else if ["zh-tw", "zh-hk", "zh-mo"].contains(where: { identifier.hasPrefix($0) }) {
                order.insert("zh-hant", at: order.count - 1)
            }
            return order
        }
    }
}

/// One language's messages, next to each other: a sentence per error code, the few templates Courier
/// composes messages with, and the messages of business errors. Register a table for a new language, or
/// change one, with ``MessageCatalog``.
///
/// ```swift
/// var japanese = MessageTable(language: "ja")
/// japanese.codes[.timedOut] = "リクエストがタイムアウトしました。"
/// japanese.setMessages([UserError.userNotFound: "ユーザーが存在しません。"])
/// MessageCatalog.register(japanese)
/// ```
public struct MessageTable: Sendable {
    /// The table's language.
    public var language: CourierError.Language
    /// A sentence per code; a code missing here is read from the English table.
    public var codes: [CourierError.Code: String]
    /// A business failure with the server's own message: `{code}` and `{message}` are replaced.
    public var serverReportedError: String
    /// A business failure without a message: `{code}` is replaced.
    public var serverReportedCode: String
    /// How an error's detail follows its sentence: `{detail}` is replaced.
    public var detail: String
    /// The templates of other modules' error details, by name (CourierSchema's `schema.moreViolations`):
    /// set one here to change or translate it; a name missing here reads the module's own default.
    public var templates: [String: String]
    /// Business errors' messages, by business error type and code.
    var business: [String: [Int: String]]

    /// A table; templates left out are English.
    public init(
        language: CourierError.Language, codes: [CourierError.Code: String] = [:],
        serverReportedError: String = "The server reported error {code}: {message}",
        serverReportedCode: String = "The server reported error {code}.", detail: String = " {detail}",
        templates: [String: String] = [:]
    ) {
        self.language = language
        self.codes = codes
        self.serverReportedError = serverReportedError
        self.serverReportedCode = serverReportedCode
        self.detail = detail
        self.templates = templates
        self.business = [:]
    }

    /// Sets the messages of business error cases (``BusinessError``) in this language.
    ///
    /// ```swift
    /// chinese.setMessages([UserError.userNotFound: "用户不存在~", .nameTaken: "用户名已被占用~"])
    /// ```
    public mutating func setMessages<E: BusinessError & Hashable>(_ messages: [E: String]) {
        let key = Self.key(of: E.self)
        for (error, message) in messages { business[key, default: [:]][error.businessCode] = message }
    }

    /// The message of `error` in this table, if it has one.
    public func message(for error: any BusinessError) -> String? {
        business[Self.key(of: type(of: error))]?[error.businessCode]
    }

    static func key(of type: any BusinessError.Type) -> String { String(reflecting: type) }
}

/// The message tables of every language, process-wide: English and Simplified Chinese ship with Courier; an
/// app adds its languages, or changes any message, here. Thread-safe.
///
/// ```swift
/// MessageCatalog.update("ja") { table in
///     table.codes[.timedOut] = "リクエストがタイムアウトしました。"
///     table.setMessages([UserError.userNotFound: "ユーザーが存在しません。"])
/// }
/// MessageCatalog.update(.english) { $0.codes[.notConnected] = "You're offline." }
/// print(error.message(in: "ja-JP"))
/// ```
public enum MessageCatalog {
    private static let tables = Locked<[String: MessageTable]>([
        MessageTable.english.language.identifier: .english,
        MessageTable.simplifiedChinese.language.identifier: .simplifiedChinese,
    ])

    /// Adds `table` for its language, replacing the language's table.
    public static func register(_ table: MessageTable) {
        tables.withLock { $0[table.language.identifier] = table }
    }

    /// Changes the table of `language` (starting from an empty one with English templates when the language
    /// has none).
    public static func update(_ language: CourierError.Language, _ change: (inout MessageTable) -> Void) {
        tables.withLock { tables in
            var table = tables[language.identifier] ?? MessageTable(language: language)
            change(&table)
            tables[language.identifier] = table
        }
    }

    /// The table registered for exactly `language`, if any.
    public static func table(for language: CourierError.Language) -> MessageTable? {
        tables.withLock { $0[language.identifier] }
    }

    /// The tables to read `language` from, most specific first, ending with English.
    static func chain(for language: CourierError.Language) -> [MessageTable] {
        tables.withLock { tables in
            var chain = language.lookupOrder.compactMap { tables[$0] }
            if let english = tables[CourierError.Language.english.identifier] { chain.append(english) }
            return chain
        }
    }

    /// The sentence of `code` in `language` (English when no table of the language has it). For a code a
    /// module declared, a registered table's sentence wins over the module's own for the same language.
    public static func message(for code: CourierError.Code, in language: CourierError.Language) -> String {
        for table in chain(for: language) {
            if let message = table.codes[code] { return message }
            if let message = code.builtInSentence(for: table.language.identifier) { return message }
        }
        return MessageTable.english.codes[code]
            ?? code.builtInSentence(for: CourierError.Language.english.identifier) ?? code.name
    }

    /// The message of a business error case in `language`: a registered one, else the case's own
    /// ``BusinessError/message``.
    public static func message(for error: any BusinessError, in language: CourierError.Language) -> String {
        for table in chain(for: language) {
            if let message = table.message(for: error) { return message }
        }
        return error.message
    }

    /// A module's template `name` in `language`, with `values` (`{name}` placeholders) filled in: a registered
    /// table's ``MessageTable/templates`` entry, else the module's `defaults` for the language, both looked
    /// up most specific language first and ending with English.
    ///
    /// ```swift
    /// MessageCatalog.compose(template: "schema.moreViolations", in: language,
    ///                        defaults: [.english: " (and {count} more)"], ["count": "3"])
    /// ```
    public static func compose(
        template name: String, in language: CourierError.Language, defaults: [CourierError.Language: String],
        _ values: [String: String]
    ) -> String {
        var template: String? = nil
        for table in chain(for: language) {
            if let own = table.templates[name] ?? defaults[table.language] {
                template = own
                break
            }
        }
        var text = template ?? defaults[.english] ?? ""
        for (name, value) in values { text = text.replacing("{\(name)}", with: value) }
        return text
    }

    /// The template of `language` that `path` picks, with `values` filled in.
    static func compose(
        _ path: KeyPath<MessageTable, String>, in language: CourierError.Language, _ values: [String: String]
    ) -> String {
        let template = chain(for: language).first.map { $0[keyPath: path] } ?? MessageTable.english[keyPath: path]
        var text = template
        for (name, value) in values { text = text.replacing("{\(name)}", with: value) }
        return text
    }
}
