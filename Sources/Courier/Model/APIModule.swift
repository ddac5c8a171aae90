#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import HTTPTypes

/// A deployment environment of a service. An open set.
///
/// ```swift
/// extension ServiceEnvironment { static let staging = ServiceEnvironment("staging") }
/// ```
public struct ServiceEnvironment: Hashable, Sendable, CustomStringConvertible {
    /// The environment's name.
    public var name: String
    /// An environment with a name.
    public init(_ name: String) { self.name = name }
    /// Test servers.
    public static let test = ServiceEnvironment("test")
    /// Development servers.
    public static let develop = ServiceEnvironment("develop")
    /// Production servers.
    public static let release = ServiceEnvironment("release")
    public var description: String { name }
}

/// A backend service: its base URLs per environment (several hosts per environment for failover), with the
/// current environment and host switchable at run time. Shared by reference: every module and call using
/// the service sees a switch at once.
///
/// ```swift
/// let api = APIService(name: "api", baseURLs: [
///     .test: [URL(string: "http://127.0.0.1:8080")!],
///     .release: [URL(string: "https://api.example.com")!, URL(string: "https://api-backup.example.com")!],
/// ], environment: .release)
/// api.switchEnvironment(to: .test)
/// api.currentBaseURL    // http://127.0.0.1:8080
/// ```
public final class APIService: Sendable {
    /// The service's name.
    public let name: String
    /// Base URLs per environment, in failover order.
    public let baseURLs: [ServiceEnvironment: [URL]]
    private let state: Locked<State>

    private struct State {
        var environment: ServiceEnvironment
        /// The environment's base URLs (read on every call: kept here instead of looked up by environment).
        var hosts: [URL]
        var hostIndex: Int
    }

    /// A service. `environment` must have at least one base URL.
    public init(name: String, baseURLs: [ServiceEnvironment: [URL]], environment: ServiceEnvironment) {
        precondition(!(baseURLs[environment] ?? []).isEmpty, "service \(name) has no base URL for \(environment)")
        self.name = name
        self.baseURLs = baseURLs
        self.state = Locked(State(environment: environment, hosts: baseURLs[environment] ?? [], hostIndex: 0))
    }

    /// A service with one base URL, used for every environment.
    public convenience init(name: String, baseURL: URL) {
        self.init(name: name, baseURLs: [.release: [baseURL]], environment: .release)
    }

    /// The current environment.
    public var environment: ServiceEnvironment { state.withLock { $0.environment } }

    /// The base URL calls use now.
    public var currentBaseURL: URL {
        state.withLock { $0.hosts[$0.hostIndex % $0.hosts.count] }
    }

    /// The hosts of the current environment, in failover order.
    public var currentHosts: [URL] { state.withLock { $0.hosts } }

    /// Switches every later call to `environment`'s first host. Returns false (and changes nothing) if the
    /// service has no base URL for it.
    @discardableResult
    public func switchEnvironment(to environment: ServiceEnvironment) -> Bool {
        guard let hosts = baseURLs[environment], !hosts.isEmpty else { return false }
        state.withLock {
            $0.environment = environment
            $0.hosts = hosts
            $0.hostIndex = 0
        }
        return true
    }

    /// Switches to the host of the current environment whose base URL has `host` as its host name (an
    /// order from outside, e.g. a push message). Returns false when no such host is configured.
    @discardableResult
    public func switchHost(to host: String) -> Bool {
        state.withLock { state in
            guard let index = state.hosts.firstIndex(where: { $0.host == host || $0.absoluteString == host }) else {
                return false
            }
            state.hostIndex = index
            return true
        }
    }

    /// Moves to the next host of the current environment (failover); returns the new base URL.
    @discardableResult
    public func advanceHost() -> URL {
        state.withLock { state in
            state.hostIndex = (state.hostIndex + 1) % state.hosts.count
            return state.hosts[state.hostIndex]
        }
    }
}

/// A named group of endpoints: its service, default header fields, interceptors and business-code mapping.
/// Interceptors registered on a module run for its endpoints only.
///
/// ```swift
/// enum UserError: Int, BusinessError { case userNotFound = 301
///     var message: String { "The user does not exist." } }
///
/// var users = APIModule(name: "user", service: api)
/// users.headers[.accept] = "application/json"
/// users.interceptors = [BearerAuth(store: tokens)]
/// users.businessRule = BusinessRule(mapping: UserError.self)
/// ```
public struct APIModule: Sendable {
    /// The module's name (used for cancellation by module, logs and errors).
    public var name: String
    /// The backend it calls.
    public var service: APIService
    /// Header fields added to every request of the module (endpoint fields win).
    public var headers: HTTPFields
    /// Interceptors for every endpoint of the module, after the client's and before the endpoint's.
    public var interceptors: [any Interceptor]
    /// How to read business codes, and the module's error enum (nil: no business codes).
    public var businessRule: BusinessRule?
    /// Settings that later stages read (validation on/off, cache defaults), keyed by type.
    public var options: EndpointOptions

    /// A module.
    public init(
        name: String, service: APIService, headers: HTTPFields = [:], interceptors: [any Interceptor] = [],
        businessRule: BusinessRule? = nil
    ) {
        self.name = name
        self.service = service
        self.headers = headers
        self.interceptors = interceptors
        self.businessRule = businessRule
        self.options = EndpointOptions()
    }
}

/// A key for a typed option stored in ``EndpointOptions`` (on endpoints and modules), so later modules (cache,
/// retry, validation) can add settings without changing the core types.
///
/// ```swift
/// enum RetryKey: OptionKey { static let defaultValue = RetryPolicy.none }
/// extension Endpoint {
///     var retry: RetryPolicy { get { options[RetryKey.self] } set { options[RetryKey.self] = newValue } }
/// }
/// ```
public protocol OptionKey {
    /// The option's type.
    associatedtype Value: Sendable
    /// The value when unset.
    static var defaultValue: Value { get }
}

extension Dictionary where Key == ObjectIdentifier, Value == any Sendable {
    /// The value stored under the key type `key` in a table keyed by types (options, ``CallStorage``), if it is a
    /// `T`. Most tables are empty and most keys unset: an empty table is not hashed into, and an absent value is
    /// not cast (a dynamic cast of `nil` costs as much as one of a value).
    @inline(__always)
    func stored<T>(_ key: Any.Type, as type: T.Type) -> T? {
        guard !isEmpty, let stored = self[ObjectIdentifier(key)] else { return nil }
        return stored as? T
    }

    /// The value stored for option `key` in a table of options (``EndpointOptions``, ``CodingHints``), else its
    /// default.
    func option<K: OptionKey>(_ key: K.Type) -> K.Value {
        stored(key, as: K.Value.self) ?? K.defaultValue
    }
}

/// Typed option storage keyed by ``OptionKey`` types.
public struct EndpointOptions: Sendable {
    private var storage: [ObjectIdentifier: any Sendable] = [:]
    /// What the set values of ``FeatureOptionKey`` options need from the chain, by key.
    private var needs: [ObjectIdentifier: ChainRequirement] = [:]

    /// No options set.
    public init() {}

    /// The option for `key` (its default when unset).
    public subscript<K: OptionKey>(key: K.Type) -> K.Value {
        get { storage.option(key) }
        set {
            storage[ObjectIdentifier(key)] = newValue
            needs[ObjectIdentifier(key)] = Self.requirement(of: key, newValue)
        }
    }

    /// What the options set here need from the chain (see ``FeatureOptionKey``), with `fallback`'s (a
    /// module's) for the options not set here.
    public func requirements(over fallback: EndpointOptions) -> [ChainRequirement] {
        var merged = needs
        for (key, requirement) in fallback.needs where storage[key] == nil { merged[key] = requirement }
        return Array(merged.values)
    }

    /// Whether the option for `key` was set.
    public func contains<K: OptionKey>(_ key: K.Type) -> Bool { storage[ObjectIdentifier(key)] != nil }
}
