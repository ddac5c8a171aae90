public import HTTPTypes

/// Sets fixed header fields on every request (replacing fields of the same name).
///
/// ```swift
/// module.interceptors.append(SetHeaders([.userAgent: "MyApp/2.1", HTTPField.Name("X-Platform")!: "linux"]))
/// ```
public struct SetHeaders: Interceptor {
    /// The fields to set.
    public var fields: HTTPFields
    public var name: String { "SetHeaders" }

    /// Sets `fields`.
    public init(_ fields: HTTPFields) { self.fields = fields }

    public func intercept(_ request: CourierRequest, context: InterceptorContext, next: InterceptorNext) async throws
        -> CourierResponse
    {
        var request = request
        for field in fields { request.head.headerFields[field.name] = nil }
        request.head.headerFields.append(contentsOf: fields)
        return try await next(request)
    }
}

/// Adds `X-Request-ID: <call id>` so server logs can be matched with the client's.
///
/// ```swift
/// let client = CourierClient(configuration: .init(interceptors: [RequestID()]))
/// ```
public struct RequestID: Interceptor {
    /// The header field name (default `X-Request-ID`).
    public var field: HTTPField.Name
    public var name: String { "RequestID" }

    /// Adds the call id under `field`.
    public init(field: HTTPField.Name = HTTPField.Name("X-Request-ID")!) { self.field = field }

    public func intercept(_ request: CourierRequest, context: InterceptorContext, next: InterceptorNext) async throws
        -> CourierResponse
    {
        var request = request
        if request.head.headerFields[field] == nil {
            request.head.headerFields[field] = "courier-\(context.callID.rawValue)"
        }
        return try await next(request)
    }
}
