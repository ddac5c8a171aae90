#if Security
#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import HTTPTypes

/// Adds parameters every call of a module carries — app version, platform, user id, session id, device id,
/// timestamp, request id, anything else — evaluated per call, to the query, the body or the header fields
/// (shaping role, named `CommonParameters`).
///
/// The body placement edits the request's `CourierRequest.payload` before the codec stage, so it works
/// for every format (JSON, XML, protobuf, form); for GET, HEAD and DELETE the codec stage moves payload
/// members to the query. A request whose body is already bytes, or whose payload is not an object, gets
/// body parameters in the query instead.
///
/// Values the endpoint already set win (``ConflictPolicy/keepEndpoint``) unless the policy is
/// ``ConflictPolicy/overwrite``. Null values are skipped. Query parameters are rendered by the call's
/// `ParameterEncoding` (`InterceptorContext.parameterEncoding`), as the codec stage renders a GET
/// payload, so numbers, arrays and objects read the same wherever they are added.
///
/// ```swift
/// let common = CommonParameters(placement: .body, [
///     .constant("app_version", "1.4.2"),
///     .constant("platform", "ios"),
///     .timestamp("ts"),
///     .requestID("request_id"),
///     .dynamic("user_id") { _ in await session.userID.map(Value.string) ?? .null },
/// ])
/// module.interceptors.append(common)
/// ```
public struct CommonParameters: Interceptor {
    /// Where the parameters go.
    ///
    /// New cases may be added in later versions: a `switch` over it should have a `default` branch.
    public enum Placement: Sendable, Hashable {
        /// The URL query.
        case query
        /// The body payload (the query for bodiless methods, via the codec stage).
        case body
        /// Header fields, named as the parameters.
        case headerFields
    }

    /// Who wins when the endpoint already has a parameter of that name.
    ///
    /// New cases may be added in later versions: a `switch` over it should have a `default` branch.
    public enum ConflictPolicy: Sendable, Hashable {
        /// The endpoint's value stays.
        case keepEndpoint
        /// The common value replaces it.
        case overwrite
    }

    /// One named parameter and how to compute its value for a call.
    public struct Parameter: Sendable {
        /// The name.
        public var name: String
        /// Computes the value (`Value.null`: leave the parameter out).
        public var value: @Sendable (InterceptorContext) async throws -> Value

        /// A parameter computed per call.
        public static func dynamic(
            _ name: String, _ value: @escaping @Sendable (InterceptorContext) async throws -> Value
        ) -> Parameter {
            Parameter(name: name, value: value)
        }

        /// A fixed value.
        public static func constant(_ name: String, _ value: Value) -> Parameter {
            Parameter(name: name) { _ in value }
        }

        /// The current Unix time in seconds (or milliseconds), read per call.
        public static func timestamp(
            _ name: String, milliseconds: Bool = false, now: @escaping @Sendable () -> Date = { Date() }
        ) -> Parameter {
            Parameter(name: name) { _ in
                let seconds = now().timeIntervalSince1970
                return .int(Int64(flooringClamped: milliseconds ? seconds * 1000 : seconds))
            }
        }

        /// A fresh random UUID per call.
        public static func requestID(_ name: String) -> Parameter {
            Parameter(name: name) { _ in .string(UUID().uuidString.lowercased()) }
        }

        /// The call's `CallID` (`#12`), for correlating with logs.
        public static func callID(_ name: String) -> Parameter {
            Parameter(name: name) { context in .string(context.callID.description) }
        }
    }

    /// Where the parameters go.
    public var placement: Placement
    /// Who wins on a name clash.
    public var policy: ConflictPolicy
    private let provider: @Sendable (InterceptorContext) async throws -> Value.Object

    /// Parameters from a list, in order.
    public init(placement: Placement = .query, policy: ConflictPolicy = .keepEndpoint, _ parameters: [Parameter]) {
        self.placement = placement
        self.policy = policy
        self.provider = { context in
            var object = Value.Object()
            for parameter in parameters {
                _ = object.updateValue(try await parameter.value(context), forKey: parameter.name)
            }
            return object
        }
    }

    /// Parameters from one provider evaluated per call (member order is kept).
    public init(
        placement: Placement = .query, policy: ConflictPolicy = .keepEndpoint,
        provider: @escaping @Sendable (InterceptorContext) async throws -> Value.Object
    ) {
        self.placement = placement
        self.policy = policy
        self.provider = provider
    }

    /// `CommonParameters`.
    public var name: String { "CommonParameters" }

    public func intercept(
        _ request: CourierRequest, context: InterceptorContext, next: InterceptorNext
    ) async throws -> CourierResponse {
        let parameters = try await provider(context).filter { !$0.value.isNull }
        guard !parameters.isEmpty else { return try await next(request) }
        var request = request
        switch placement {
        case .query:
            try addToQuery(parameters, &request, encoding: context.parameterEncoding)
        case .headerFields:
            for (name, value) in parameters {
                let field = try HTTPField.Name.required(name)
                guard policy == .overwrite || request.head.headerFields[field] == nil else { continue }
                request.head.headerFields[field] = try Self.headerText(name, value)
            }
        case .body:
            if request.body == nil, request.payload == nil {
                request.payload = .object(Value.Object())
            }
            if request.body == nil, case .object(var object)? = request.payload {
                for (name, value) in parameters where policy == .overwrite || !object.contains(name) {
                    _ = object.updateValue(value, forKey: name)
                }
                request.payload = .object(object)
            } else {
                try addToQuery(parameters, &request, encoding: context.parameterEncoding)
            }
        }
        return try await next(request)
    }

    /// Appends the parameters to the query, rendered by `encoding` (the query already there keeps its bytes;
    /// a parameter already present, as `name`, `name[…]` or `name.…`, is kept or replaced per ``policy``).
    private func addToQuery(
        _ parameters: [(key: String, value: Value)], _ request: inout CourierRequest, encoding: ParameterEncoding
    ) throws {
        var (path, segments) = splitRawPath(request.head.path)
        for (name, value) in parameters {
            let exists = segments.contains { belongs(decodedPair($0).name, to: name) }
            if exists {
                guard policy == .overwrite else { continue }
                segments.removeAll { belongs(decodedPair($0).name, to: name) }
            }
            let rendered = ParameterEncoding.render(try encoding.pairs(name: name, value: value))
            if !rendered.isEmpty { segments += rendered.split(separator: "&").map(String.init) }
        }
        request.head.path = joinRawPath(path, segments)
    }

    /// A header field's text: a scalar's canonical text (``ParameterEncoding/scalarText(_:)``), an array of
    /// scalars comma-joined (the HTTP list syntax); an object has no header form and is an encoding error.
    static func headerText(_ name: String, _ value: Value) throws -> String {
        if let text = ParameterEncoding.scalarText(value) { return text }
        if case .array(let elements) = value {
            var texts: [String] = []
            for (i, element) in elements.enumerated() {
                guard let text = ParameterEncoding.scalarText(element) else {
                    throw CourierError(.encodingFailed,
                                       detail: "the header parameter '\(name)' holds \(element.kindName) at index \(i), which has no header form",
                                       context: .init(codingPath: [.key(name), .index(i)]))
                }
                texts.append(text)
            }
            return texts.joined(separator: ",")
        }
        throw CourierError(.encodingFailed, detail: "the header parameter '\(name)' is \(value.kindName), which has no header form",
                           context: .init(codingPath: [.key(name)]))
    }
}
#endif
