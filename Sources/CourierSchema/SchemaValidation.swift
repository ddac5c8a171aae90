import HTTPTypes

/// The pipeline's validation stage: checks each successful response's decoded `Value` against the JSON
/// Schema its endpoint names (`Endpoint.responseSchema`) before typed decoding, whatever the wire
/// format — XML and protobuf answers are validated by the same schemas as JSON ones. A violation fails the
/// call with `CourierError.Code.schemaViolation`, every violation attached and the first one in the
/// message. Error statuses and business failures pass through unvalidated (they are errors already).
///
/// A validation that reaches one of the limits of ``CompiledSchema/Options`` (a hostile answer built to
/// make validation exponential, say) fails the call with `CourierError.Code.validationLimitExceeded`
/// instead, its detail naming the schema and the limit: the answer was neither accepted nor found invalid.
///
/// Register it on a module to validate all its endpoints that name a schema (or globally, or per endpoint).
/// For XML answers it also hands the codec the schema's shape, so a single `<tag>` where the schema expects
/// an array decodes as an array and `<age>42</age>` as a number.
///
/// ```swift
/// var registry = SchemaRegistry()
/// try registry.addDirectory(at: URL(fileURLWithPath: "Schemas"))
/// users.interceptors.append(SchemaValidation(registry: registry))
/// var endpoint = Endpoint(name: "getUser", module: users, path: "/users/7")
/// endpoint.responseSchema = "https://courier.example/schemas/user.schema.json#/$defs/response"
/// ```
public struct SchemaValidation: Interceptor {
    /// The schemas endpoints refer to (compiled once each and cached by the registry).
    public var registry: SchemaRegistry
    /// Validation options (format assertion, violation limits, evaluation limits).
    public var options: CompiledSchema.Options
    /// A schema for endpoints that name none (nil: such endpoints are not validated).
    public var defaultSchema: String?

    public var name: String { "SchemaValidation" }
    /// `InterceptorRole.validation`.
    public var role: InterceptorRole { .validation }

    /// A validation stage over `registry`.
    public init(registry: SchemaRegistry, options: CompiledSchema.Options = .init(), defaultSchema: String? = nil) {
        self.registry = registry
        self.options = options
        self.defaultSchema = defaultSchema
    }

    public func intercept(_ request: CourierRequest, context: InterceptorContext, next: InterceptorNext) async throws
        -> CourierResponse
    {
        guard let id = context.endpoint.responseSchema ?? defaultSchema else { return try await next(request) }
        let schema = try registry.compile(id: id, options: options)
        var request = request
        if request.responseHints.shape == nil || request.responseHints.shape == .any {
            request.responseHints.shape = schema.shape
        }
        let response = try await next(request)
        guard response.succeeded, let value = response.value else {
            return response
        }
        do {
            try schema.check(value)
        } catch var error as CourierError {
            error.context.status = Int(response.head.status.code)
            error.detail = error.detail.map { "schema \(id): \($0)" } ?? "schema \(id)"
            throw error
        }
        return response
    }
}
