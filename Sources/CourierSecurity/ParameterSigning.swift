#if Security
#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import Crypto
import HTTPTypes

/// The signature scheme many existing APIs use: parameters sorted by name, joined, the secret appended,
/// hashed to hex. Every step is configurable; the defaults give the common `MD5(k1=v1&k2=v2&key=SECRET)`
/// in upper-case hex.
///
/// The signed string is built from the parameters with non-empty values (``Options/skipsEmptyValues``),
/// minus ``Options/excludedNames``, sorted by name (then value) in byte order, each written as `name=value`
/// (``PairFormat/keyEqualsValue``) or `namevalue` (``PairFormat/concatenated``) with raw (not
/// percent-encoded) values, joined with ``Options/separator``; then the secret is placed per
/// ``SecretPlacement``. The digest is hex in ``Options/letterCase``.
///
/// ```swift
/// let signer = ParameterSigner(secret: "192006250b4c09247ec02edce69f6a2d")
/// signer.signature(for: [QueryItem("appid", "wxd930ea5d5a258f4f"), QueryItem("body", "test"), ...])
/// // "9A0A8659F005D6984697E2CA0A9CF3B7"
/// ```
public struct ParameterSigner: Sendable, CustomStringConvertible {
    /// The hash.
    ///
    /// New cases may be added in later versions: a `switch` over it should have a `default` branch.
    public enum Digest: Sendable, Hashable {
        /// MD5 (legacy APIs only).
        case md5
        /// SHA-1 (legacy APIs only).
        case sha1
        /// SHA-256.
        case sha256
        /// HMAC-SHA256 keyed with the secret (``SecretPlacement/none`` is then usual).
        case hmacSHA256
    }

    /// How each pair is written.
    ///
    /// New cases may be added in later versions: a `switch` over it should have a `default` branch.
    public enum PairFormat: Sendable, Hashable {
        /// `name=value`.
        case keyEqualsValue
        /// `namevalue`.
        case concatenated
    }

    /// Where the secret goes in the signed string.
    ///
    /// New cases may be added in later versions: a `switch` over it should have a `default` branch.
    public enum SecretPlacement: Sendable, Hashable {
        /// After the pairs as one more pair: `…&key=SECRET` (name given; the separator and pair format apply).
        case parameter(name: String)
        /// Right after the pairs, as is: `…SECRET`.
        case appended
        /// Before and after: `SECRET…SECRET`.
        case surrounding
        /// Nowhere (with ``Digest/hmacSHA256``, which is keyed with it).
        case none
    }

    /// Hex letter case.
    ///
    /// New cases may be added in later versions: a `switch` over it should have a `default` branch.
    public enum LetterCase: Sendable, Hashable {
        /// `9a0a…`.
        case lower
        /// `9A0A…`.
        case upper
    }

    /// Settings.
    public struct Options: Sendable {
        /// The hash. Default MD5.
        public var digest: Digest
        /// Hex case of the result. Default upper.
        public var letterCase: LetterCase
        /// How pairs are written. Default `name=value`.
        public var pairFormat: PairFormat
        /// Between pairs. Default `&`.
        public var separator: String
        /// Where the secret goes. Default `&key=SECRET`.
        public var secretPlacement: SecretPlacement
        /// Leave out parameters whose value is empty or absent. Default true.
        public var skipsEmptyValues: Bool
        /// Names never signed (the signature field is always left out). Default none.
        public var excludedNames: Set<String>

        /// The common MD5 scheme.
        public init() {
            digest = .md5
            letterCase = .upper
            pairFormat = .keyEqualsValue
            separator = "&"
            secretPlacement = .parameter(name: "key")
            skipsEmptyValues = true
            excludedNames = []
        }
    }

    private let secret: String
    /// The settings.
    public var options: Options

    /// A signer.
    public init(secret: String, options: Options = Options()) {
        self.secret = secret
        self.options = options
    }

    public var description: String { "ParameterSigner(\(options.digest), ‹secret›)" }

    /// The parameters that are signed, in signing order.
    public func signedParameters(_ parameters: [QueryItem], excluding field: String? = nil) -> [QueryItem] {
        parameters.filter { item in
            item.name != field && !options.excludedNames.contains(item.name)
                && !(options.skipsEmptyValues && (item.value ?? "").isEmpty)
        }.sorted { a, b in
            if a.name != b.name { return a.name.utf8.lexicographicallyPrecedes(b.name.utf8) }
            return (a.value ?? "").utf8.lexicographicallyPrecedes((b.value ?? "").utf8)
        }
    }

    /// The string before the secret is placed (no secret in it): sorted pairs joined.
    public func canonicalString(for parameters: [QueryItem], excluding field: String? = nil) -> String {
        signedParameters(parameters, excluding: field).map { pair($0.name, $0.value ?? "") }
            .joined(separator: options.separator)
    }

    private func pair(_ name: String, _ value: String) -> String {
        options.pairFormat == .keyEqualsValue ? name + "=" + value : name + value
    }

    /// The signature of `parameters` (leaving out `field`, the signature's own name).
    public func signature(for parameters: [QueryItem], excluding field: String? = nil) -> String {
        let base = canonicalString(for: parameters, excluding: field)
        var text: String
        switch options.secretPlacement {
        case .parameter(let name):
            text = base + (base.isEmpty ? "" : options.separator) + pair(name, secret)
        case .appended: text = base + secret
        case .surrounding: text = secret + base + secret
        case .none: text = base
        }
        let bytes = Data(text.utf8)
        text = ""
        let upper = options.letterCase == .upper
        switch options.digest {
        case .md5: return Hex.encode(Insecure.MD5.hash(data: bytes), uppercase: upper)
        case .sha1: return Hex.encode(Insecure.SHA1.hash(data: bytes), uppercase: upper)
        case .sha256: return Hex.encode(SHA256.hash(data: bytes), uppercase: upper)
        case .hmacSHA256:
            let key = SymmetricKey(data: Data(secret.utf8))
            return Hex.encode(HMAC<SHA256>.authenticationCode(for: bytes, using: key), uppercase: upper)
        }
    }

    /// Checks the signature in `field` of `parameters` (server side), comparing in constant time; throws
    /// `CourierError.Code.signatureMissing` or `CourierError.Code.signatureInvalid`.
    public func verify(_ parameters: [QueryItem], signatureField field: String = "sign") throws {
        guard let sent = parameters.last(where: { $0.name == field })?.value, !sent.isEmpty else {
            throw CourierError(.signatureMissing, detail: "the parameter \(field) is missing")
        }
        let expected = signature(for: parameters, excluding: field)
        guard constantTimeEquals(Array(sent.utf8), Array(expected.utf8)) else {
            throw CourierError(.signatureInvalid, detail: "the parameter signature does not match")
        }
    }
}

/// Signs a request's parameters with a ``ParameterSigner`` (`InterceptorRole.shaping` role, named `ParameterSigning`),
/// optionally after adding a timestamp and a nonce; the signature is added as one more parameter.
///
/// **What is signed is what is sent.** The signed pairs are read back from the final text, rendered by the
/// one renderer, `ParameterEncoding` (the call's `InterceptorContext.parameterEncoding`):
///
/// - GET, HEAD, DELETE: the stage moves the payload into the query itself (exactly as the codec stage
///   would), then signs every pair of the query as it will be sent, percent-decoded (`+` stays a plus).
///   The query already in the path keeps its bytes.
/// - A form body: the stage encodes it itself (`InterceptorContext.encodeBody(_:format:hints:)`, the
///   codec stage's own path) and signs the query's pairs and the body's pairs (`+` read as a space).
/// - Other bodies (JSON, XML, protobuf): the query's pairs plus the pairs `ParameterEncoding` makes of
///   the payload's members (`["filter": ["a": 1]]` signs `filter[a]=1`), so a server re-derives them from
///   the decoded body with the same encoding.
///
/// A verifying server percent-decodes the query (and form body) it received, and calls
/// ``ParameterSigner/verify(_:signatureField:)`` with those pairs.
///
/// Added fields go to the payload when the request sends one as a body (an object payload on a method with
/// a body), else to the query (``Placement/automatic``); ``Order`` says whether they are appended or the
/// parameters re-sorted by name.
///
/// ```swift
/// var options = ParameterSigning.Options()
/// options.timestampField = "timestamp"
/// options.nonceField = "nonce_str"
/// let signing = ParameterSigning(signer: ParameterSigner(secret: appSecret), options: options)
/// ```
public struct ParameterSigning: Interceptor {
    /// Where the added fields go.
    ///
    /// New cases may be added in later versions: a `switch` over it should have a `default` branch.
    public enum Placement: Sendable, Hashable {
        /// The payload when the request sends one as a body, else the query.
        case automatic
        /// Always the query.
        case query
        /// Always the payload (created if absent); for GET, HEAD and DELETE the payload is the query.
        case payload
    }

    /// The order of the outgoing parameters.
    ///
    /// New cases may be added in later versions: a `switch` over it should have a `default` branch.
    public enum Order: Sendable, Hashable {
        /// Added fields after the existing ones, signature last.
        case appended
        /// Every parameter (signature included) sorted by name.
        case sorted
    }

    /// Settings.
    public struct Options: Sendable {
        /// The signature's parameter name. Default `sign`.
        public var signatureField: String
        /// A Unix-seconds timestamp parameter added before signing (nil: none). Default nil.
        public var timestampField: String?
        /// A random nonce parameter added before signing (nil: none). Default nil.
        public var nonceField: String?
        /// Where added fields go. Default automatic.
        public var placement: Placement
        /// The outgoing order. Default appended.
        public var order: Order

        /// Defaults: `sign`, no timestamp or nonce, automatic placement, appended.
        public init() {
            signatureField = "sign"
            timestampField = nil
            nonceField = nil
            placement = .automatic
            order = .appended
        }
    }

    /// The signer.
    public var signer: ParameterSigner
    /// The settings.
    public var options: Options
    /// The current time (injectable for tests).
    public var now: @Sendable () -> Date
    /// Makes a nonce (injectable for tests).
    public var makeNonce: @Sendable () -> String

    /// A parameter-signing stage.
    public init(
        signer: ParameterSigner, options: Options = Options(), now: @escaping @Sendable () -> Date = { Date() },
        makeNonce: @escaping @Sendable () -> String = RequestSigning.randomNonce
    ) {
        self.signer = signer
        self.options = options
        self.now = now
        self.makeNonce = makeNonce
    }

    /// `ParameterSigning`.
    public var name: String { "ParameterSigning" }

    private static let bodilessMethods: Set<String> = ["GET", "HEAD", "DELETE"]

    /// Where the signature (and the added fields) end up.
    private enum Target {
        case query, formBody, payload
    }

    public func intercept(
        _ request: CourierRequest, context: InterceptorContext, next: InterceptorNext
    ) async throws -> CourierResponse {
        var request = request
        let bodiless = Self.bodilessMethods.contains(request.head.method.rawValue)
        let object = request.payload?.objectValue
        let sendsPayloadBody = request.body == nil && object != nil && !bodiless
        let toPayload: Bool
        switch options.placement {
        case .automatic: toPayload = sendsPayloadBody
        case .query: toPayload = false
        case .payload: toPayload = request.body == nil && (request.payload == nil || object != nil)
        }
        var added: [(String, String)] = []
        if let field = options.timestampField {
            added.append((field, String(Int64(flooringClamped: now().timeIntervalSince1970))))
        }
        if let field = options.nonceField { added.append((field, makeNonce())) }

        var (path, query) = splitRawPath(request.head.path)
        var payload = object ?? Value.Object()
        if toPayload {
            for (name, value) in added { _ = payload.updateValue(.string(value), forKey: name) }
        }
        // Render now what the codec stage would render later, so the signature covers the final text.
        let target: Target
        var form: [String] = []
        var rendersForm = false
        var payloadPairs: [QueryItem] = []
        if request.body == nil, bodiless, request.payload == nil || object != nil {
            // The payload goes to the query (as the codec stage would put it), and so does everything added.
            let rendered = ParameterEncoding.render(try context.parameterEncoding.pairs(payload))
            query += rendered.split(separator: "&").map(String.init)
            request.payload = nil
            target = .query
        } else if request.body == nil, object != nil || toPayload, request.format == .form {
            // A form body: encoded here exactly as the codec stage would, then signed as text.
            let body = try context.encodeBody(.object(payload), format: .form, hints: request.hints)
            form = String(decoding: body, as: UTF8.self).split(separator: "&").map(String.init)
            request.payload = nil
            rendersForm = true
            target = toPayload ? .formBody : .query
        } else if request.body == nil, object != nil || toPayload {
            // JSON, XML, protobuf: the members are signed as the pairs ParameterEncoding makes of them.
            payloadPairs = try context.parameterEncoding.pairs(payload)
            target = toPayload ? .payload : .query
        } else {
            if request.format == .form, let body = request.body {
                form = String(decoding: body, as: UTF8.self).split(separator: "&").map(String.init)
            }
            target = .query
        }
        if !toPayload {
            for (name, value) in added {
                query.removeAll { decodedPair($0).name == name }
                query.append(ParameterEncoding.render([QueryItem(name, value)]))
            }
        }

        let parameters = query.map { decodedPair($0) } + form.map { decodedPair($0, plusAsSpace: true) } + payloadPairs
        let signature = signer.signature(for: parameters, excluding: options.signatureField)
        let field = options.signatureField
        let signed = ParameterEncoding.render([QueryItem(field, signature)])
        switch target {
        case .query:
            query.removeAll { decodedPair($0).name == field }
            query.append(signed)
            if options.order == .sorted { query = sortedByDecodedName(query) }
        case .formBody:
            form.removeAll { decodedPair($0, plusAsSpace: true).name == field }
            form.append(signed)
            if options.order == .sorted { form = sortedByDecodedName(form, plusAsSpace: true) }
        case .payload:
            _ = payload.removeValue(forKey: field)
            payload.append(field, .string(signature))
            if options.order == .sorted { payload = payload.sortedByKey() }
            request.payload = .object(payload)
        }
        if rendersForm {
            request.body = Data(form.joined(separator: "&").utf8)
        }
        request.head.path = joinRawPath(path, query)
        return try await next(request)
    }
}
#endif
