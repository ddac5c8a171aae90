/// Something a chain can do only when an interceptor that does it is registered — retrying, caching — named
/// so that an option depending on it can say so. An open set: a module adds its own as static members.
///
/// ```swift
/// extension ChainFeature {
///     static let retry = ChainFeature("retry")
/// }
/// struct MyRetry: Interceptor {
///     var provides: Set<ChainFeature> { [.retry] }
///     …
/// }
/// ```
public struct ChainFeature: Hashable, Sendable, CustomStringConvertible {
    /// The feature's name (`retry`, `cache`).
    public let name: String

    /// A feature named `name`.
    public init(_ name: String) { self.name = name }

    public var description: String { name }
}

/// What an option set on an endpoint or module needs from the chain: a ``ChainFeature`` some interceptor
/// must provide, the option's name and the interceptor that would provide it, for the error message.
public struct ChainRequirement: Hashable, Sendable, CustomStringConvertible {
    /// The feature the option needs.
    public var feature: ChainFeature
    /// The option, as a user sets it (`retryPolicy`).
    public var option: String
    /// What to register to meet it (`RetryInterceptor`).
    public var provider: String

    /// A requirement.
    public init(feature: ChainFeature, option: String, provider: String) {
        self.feature = feature
        self.option = option
        self.provider = provider
    }

    public var description: String { "\(option) needs \(provider) (\(feature))" }
}

/// An ``OptionKey`` whose values only take effect when an interceptor providing a ``ChainFeature`` is in the
/// chain. Setting one (on an ``Endpoint`` or ``APIModule``) to a value that needs it makes every call of that
/// endpoint fail fast with ``CourierError/Code/invalidConfiguration`` when no interceptor of its chain
/// provides the feature — instead of silently doing nothing.
///
/// ```swift
/// enum RetryPolicyOption: FeatureOptionKey {
///     static let defaultValue: RetryPolicy? = nil
///     static func requirement(for value: RetryPolicy?) -> ChainRequirement? {
///         value == nil ? nil : ChainRequirement(feature: .retry, option: "retryPolicy", provider: "RetryInterceptor")
///     }
/// }
/// ```
public protocol FeatureOptionKey: OptionKey {
    /// What `value` needs from the chain; `nil` when it needs nothing (an "off" value such as `.ignore`).
    static func requirement(for value: Value) -> ChainRequirement?
}

extension EndpointOptions {
    /// What `key`'s `value` needs from the chain, when `key` is a ``FeatureOptionKey``.
    static func requirement<K: OptionKey>(of key: K.Type, _ value: K.Value) -> ChainRequirement? {
        guard let featured = key as? any FeatureOptionKey.Type else { return nil }
        return requirement(featured, value)
    }

    private static func requirement<F: FeatureOptionKey>(_ key: F.Type, _ value: Any) -> ChainRequirement? {
        guard let typed = value as? F.Value else { return nil }
        return F.requirement(for: typed)
    }
}

extension Pipeline {
    /// The requirements of `endpoint`'s options (and its module's, where the endpoint sets none for the same
    /// option) that no stage of this chain provides; empty when the chain can do all they ask.
    public func unmetRequirements(of endpoint: Endpoint) -> [ChainRequirement] {
        let required = endpoint.options.requirements(over: endpoint.module.options)
        guard !required.isEmpty else { return [] }
        let provided = stages.reduce(into: Set<ChainFeature>()) { $0.formUnion($1.provides) }
        return required
            .filter { !provided.contains($0.feature) }
            .sorted { $0.option < $1.option }
    }
}
