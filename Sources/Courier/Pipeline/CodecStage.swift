#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes

/// The built-in stage just above the network role (named `codec`). On the way out it
/// encodes ``CourierRequest/payload`` into ``CourierRequest/body`` with the request's format (for GET, HEAD
/// and DELETE an object payload's members go to the query instead, rendered by the call's
/// ``ParameterEncoding`` — ``InterceptorContext/parameterEncoding`` — after any query already there) and sets `Content-Type` and `Accept`; on the
/// way back it decodes the body into ``CourierResponse/value`` using the expected format, else the
/// response's `Content-Type`.
///
/// A 2xx body that cannot be decoded is a decoding error; the body of an error status that cannot be decoded
/// is kept as bytes (the status is the error). Every pipeline has exactly one codec stage.
/// Built in by ``Pipeline``; not part of the public API.
package struct CodecStage: Interceptor {
    /// Always `codec`.
    public var name: String { "codec" }

    /// The stage.
    public init() {}

    public func intercept(
        _ request: CourierRequest, context: InterceptorContext, next: InterceptorNext
    ) async throws -> CourierResponse {
        var request = request
        try encode(&request, context: context)
        var response = try await next(request)
        try decode(&response, for: request, codecs: context.codecs)
        return response
    }

    static let queryMethods: Set<HTTPRequest.Method> = [.get, .head, .delete]

    @inline(never)
    func encode(_ request: inout CourierRequest, context: InterceptorContext) throws {
        if let payload = request.payload, request.body == nil {
            if Self.queryMethods.contains(request.head.method), case .object(let object) = payload {
                request.head.path = try context.appendingQuery(object, to: request.head.path)
            } else {
                request.body = try context.encodeBody(payload, format: request.format, hints: request.hints)
            }
            request.payload = nil
        }
        if request.body != nil, request.head.headerFields[.contentType] == nil {
            request.head.headerFields[.contentType] = request.format.mediaType
        }
        if request.head.headerFields[.accept] == nil {
            if let expected = request.responseFormat {
                request.head.headerFields[.accept] = expected.mediaType
            } else {
                request.head.headerFields.append(Self.acceptAnyFormat)
            }
        }
    }

    /// The `Accept` field of a call that expects no particular format: made once, since making a field checks
    /// every byte of its value.
    static let acceptAnyFormat = HTTPField(
        name: .accept, value: "application/json, application/xml;q=0.9, application/x-protobuf;q=0.8, */*;q=0.5")

    @inline(never)
    func decode(_ response: inout CourierResponse, for request: CourierRequest, codecs: CodecSet) throws {
        guard response.value == nil, !response.body.isEmpty else { return }
        let declared = response.head.headerFields.contentType
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
