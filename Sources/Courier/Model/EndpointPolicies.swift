#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import HTTPTypes

/// Which HTTP statuses count as success for an endpoint (YTKNetwork's status validator); the built-in
/// `errorMapping` stage maps every other status to ``CourierError/Code/http(status:)``.
///
/// ```swift
/// endpoint.statusValidator = .statuses(Set(200...299).union([304]))
/// endpoint.statusValidator = StatusValidator { $0.code == 200 }      // only 200
/// ```
public struct StatusValidator: Sendable {
    private let accepts: @Sendable (HTTPResponse.Status) -> Bool

    /// A validator from a predicate.
    public init(_ accepts: @escaping @Sendable (HTTPResponse.Status) -> Bool) { self.accepts = accepts }

    /// Whether `status` is a success.
    public func accepts(_ status: HTTPResponse.Status) -> Bool { accepts(status) }

    /// 2xx (the default).
    public static let successful = StatusValidator { $0.kind == .successful }

    /// Exactly these status codes.
    public static func statuses(_ codes: Set<Int>) -> StatusValidator {
        StatusValidator { codes.contains(Int($0.code)) }
    }
}

/// What to do when a call starts while an identical one (same method, URL and body, same endpoint name) is
/// still running.
///
/// New cases may be added in later versions: a `switch` over it should have a `default` branch.
///
/// ```swift
/// endpoint.duplicatePolicy = .share            // one exchange, every caller gets its answer
/// search.duplicatePolicy = .cancelPrevious     // search-as-you-type: the newest wins
/// ```
public enum DuplicateCallPolicy: Sendable, Hashable {
    /// Every call makes its own exchange (the default).
    case allow
    /// The new call waits for the running one and gets its reply (its own ``CallID``; cancelling it stops
    /// only its wait). Only calls that decode into the same type share.
    case share
    /// The running call is cancelled (its caller gets ``CourierError/Code/cancelled``) and the new one runs.
    case cancelPrevious
}

enum BusinessRuleOption: OptionKey { static let defaultValue: BusinessRule? = nil }
enum StatusValidatorOption: OptionKey { static let defaultValue = StatusValidator.successful }
enum DuplicatePolicyOption: OptionKey { static let defaultValue = DuplicateCallPolicy.allow }

extension Endpoint {
    /// The business-code rule for this endpoint, overriding its module's ``APIModule/businessRule`` (nil:
    /// the module's).
    ///
    /// ```swift
    /// legacy.businessRule = BusinessRule(codePath: ["status"], successCodes: [1])
    /// ```
    public var businessRule: BusinessRule? {
        get { options[BusinessRuleOption.self] }
        set { options[BusinessRuleOption.self] = newValue }
    }

    /// The statuses that count as success (default 2xx).
    public var statusValidator: StatusValidator {
        get { options[StatusValidatorOption.self] }
        set { options[StatusValidatorOption.self] = newValue }
    }

    /// What happens when an identical call is already running (default ``DuplicateCallPolicy/allow``).
    public var duplicatePolicy: DuplicateCallPolicy {
        get { options[DuplicatePolicyOption.self] }
        set { options[DuplicatePolicyOption.self] = newValue }
    }

    /// The business rule in force: the endpoint's, else the module's.
    public var effectiveBusinessRule: BusinessRule? { businessRule ?? module.businessRule }
}

extension Priority {
    /// The Swift task priority a call of this priority runs at: `.high` (and above) → `.high`, `.low` (and
    /// below) → `.low`, otherwise `.medium`.
    public var taskPriority: TaskPriority {
        if rawValue >= Priority.high.rawValue { return .high }
        if rawValue <= Priority.low.rawValue { return .low }
        return .medium
    }

    /// The priority as URLSession's task priority (0…1: low 0.25, normal 0.5, high 0.75, linear between and
    /// clamped beyond).
    public var urlSessionPriority: Float {
        Float(min(1, max(0, 0.5 + Double(rawValue) / 400)))
    }
}
