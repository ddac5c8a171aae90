#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes

/// The built-in stage between the application and network phases (named `codec`). On the way out it
/// encodes ``CourierRequest/payload`` into ``CourierRequest/body`` with the request's format (for GET, HEAD
/// and DELETE the payload's members go to the query instead) and sets `Content-Type` and `Accept`; on the
/// way back it decodes the body into ``CourierResponse/value`` using the expected format, else the
/// response's `Content-Type`.
///
/// A 2xx body that cannot be decoded is a decoding error; the body of an error status that cannot be decoded
/// is kept as bytes (the status is the error). Every pipeline has exactly one codec stage.
///
/// ```swift
/// let pipeline = Pipeline(global: [], module: [], endpoint: [], codec: CodecStage(), transport: transport)
/// ```
public struct CodecStage: Interceptor {
    /// Always `codec`.
    public var name: String { "codec" }

    /// The stage.
    public init() {}

    public func intercept(
        _ request: CourierRequest, context: InterceptorContext, next: InterceptorNext
    ) async throws -> CourierResponse {
        var request = request
        try encode(&request, codecs: context.codecs)
        var response = try await next(request)
        try decode(&response, for: request, codecs: context.codecs)
        return response
    }

    static let queryMethods: Set<HTTPRequest.Method> = [.get, .head, .delete]

    func encode(_ request: inout CourierRequest, codecs: CodecSet) throws {
        if let payload = request.payload, request.body == nil {
            if Self.queryMethods.contains(request.head.method), case .object(let object) = payload {
                let items = object.map { QueryItem($0.key, Self.queryText($0.value)) }
                if !items.isEmpty {
                    let path = request.head.path ?? "/"
                    request.head.path = path + (path.contains("?") ? "&" : "?") + QueryItem.encode(items)
                }
            } else {
                do {
                    request.body = try codecs.encode(payload, format: request.format, hints: request.hints)
                } catch {
                    throw CourierError.wrap(error, as: .encodingFailed)
                }
            }
            request.payload = nil
        }
        if request.body != nil, request.head.headerFields[.contentType] == nil {
            request.head.headerFields[.contentType] = request.format.mediaType
        }
        if request.head.headerFields[.accept] == nil {
            request.head.headerFields[.accept] = request.responseFormat?.mediaType
                ?? "application/json, application/xml;q=0.9, application/x-protobuf;q=0.8, */*;q=0.5"
        }
    }

    static func queryText(_ value: Value) -> String? {
        switch value {
        case .null: return nil
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .uint(let u): return String(u)
        case .double(let d): return "\(d)"
        case .number(let s), .string(let s): return s
        case .bytes(let b): return Data(b).base64EncodedString()
        case .array(let a): return a.compactMap(queryText).joined(separator: ",")
        case .object: return nil
        }
    }

    func decode(_ response: inout CourierResponse, for request: CourierRequest, codecs: CodecSet) throws {
        guard response.value == nil, !response.body.isEmpty else { return }
        let declared = response.head.headerFields[.contentType]
        let format: ContentFormat
        if let expected = request.responseFormat {
            format = expected
        } else if let declared {
            guard let known = ContentFormat(contentType: declared) else {
                // Unknown media type: text stays readable, anything else stays bytes.
                response.value = declared.lowercased().hasPrefix("text/")
                    ? .string(String(decoding: response.body, as: UTF8.self)) : .bytes(Array(response.body))
                return
            }
            format = known
        } else {
            format = .json
        }
        response.format = format
        do {
            response.value = try codecs.decode(response.body, format: format, hints: request.responseHints)
        } catch {
            guard response.isSuccessful else { return }
            var wrapped = CourierError.wrap(error, as: .malformedInput)
            wrapped.context.status = Int(response.head.status.code)
            throw wrapped
        }
    }
}
