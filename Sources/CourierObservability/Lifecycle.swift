#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import HTTPTypes

/// Hears about a call's lifecycle (YTKNetwork's request accessories): for HUDs, logging, metrics. Every
/// method has an empty default, so implement only what you need. Methods run on the call's task; keep them
/// quick.
///
/// ```swift
/// struct Spinner: CallLifecycleObserver {
///     let hud: HUD
///     func callWillStart(_ call: CallInfo) { hud.show() }
///     func callWillStop(_ call: CallInfo, outcome: CallOutcome) { hud.hide() }
/// }
/// let client = CourierClient(configuration: .init(interceptors: [LifecycleInterceptor(observers: [Spinner(hud: hud)])]))
/// ```
public protocol CallLifecycleObserver: Sendable {
    /// Before the call goes further down the chain.
    func callWillStart(_ call: CallInfo)
    /// As soon as the rest of the chain has answered, before any observer's ``callDidStop(_:outcome:)``.
    func callWillStop(_ call: CallInfo, outcome: CallOutcome)
    /// After every observer's ``callWillStop(_:outcome:)``.
    func callDidStop(_ call: CallInfo, outcome: CallOutcome)
}

extension CallLifecycleObserver {
    public func callWillStart(_ call: CallInfo) {}
    public func callWillStop(_ call: CallInfo, outcome: CallOutcome) {}
    public func callDidStop(_ call: CallInfo, outcome: CallOutcome) {}
}

/// The call an observer hears about.
public struct CallInfo: Sendable {
    /// The call's identifier.
    public var callID: CallID
    /// The module's name.
    public var module: String
    /// The endpoint's name.
    public var endpoint: String
    /// `GET http://host/path` (no query values).
    public var request: String
    /// When the call reached the observing stage.
    public var startDate: Date
}

/// How a call ended.
///
/// New cases may be added in later versions: a `switch` over it should have a `default` branch.
public enum CallOutcome: Sendable {
    /// A response (any status) from a source.
    case response(status: Int, source: ResponseSource)
    /// A failure.
    case failure(CourierError)

    /// Whether the call got a 2xx response.
    public var isSuccess: Bool {
        if case .response(let status, _) = self { return (200..<300).contains(status) }
        return false
    }
}

/// Calls ``CallLifecycleObserver``s around the rest of the chain.
///
/// ```swift
/// let lifecycle = LifecycleInterceptor(observers: [Spinner(hud: hud), AuditTrail()])
/// ```
public struct LifecycleInterceptor: Interceptor {
    /// The observers, called in order.
    public var observers: [any CallLifecycleObserver]

    /// A stage calling `observers`.
    public init(observers: [any CallLifecycleObserver]) { self.observers = observers }

    /// `lifecycle`.
    public var name: String { "lifecycle" }
    /// `InterceptorRole.observation`.
    public var role: InterceptorRole { .observation }

    public func intercept(
        _ request: CourierRequest, context: InterceptorContext, next: InterceptorNext
    ) async throws -> CourierResponse {
        let info = CallInfo(
            callID: context.callID, module: context.module.name, endpoint: context.endpoint.name,
            request: request.summary, startDate: Date())
        for observer in observers { observer.callWillStart(info) }
        let outcome: CallOutcome
        let result: Result<CourierResponse, any Error>
        do {
            let response = try await next(request)
            outcome = .response(status: Int(response.head.status.code), source: response.source)
            result = .success(response)
        } catch {
            outcome = .failure(CourierError.wrap(error, as: .transportFailure).adding(context.errorContext))
            result = .failure(error)
        }
        for observer in observers { observer.callWillStop(info, outcome: outcome) }
        for observer in observers { observer.callDidStop(info, outcome: outcome) }
        return try result.get()
    }
}
