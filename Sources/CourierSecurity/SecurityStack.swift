#if Security
/// The security stages of a module in their documented order; register them with
/// ``Courier/APIModule/secured(_:)``.
///
/// On the way out:
///
/// ```text
/// CommonParameters → BearerAuth → ParameterSigning → codec → EnvelopeEncryption → RequestSigning → transport
/// ```
///
/// and on the way back the exact reverse:
///
/// ```text
/// transport → RequestSigning (response signature) → EnvelopeEncryption (decrypt, restore Content-Type)
///           → codec (decode) → ParameterSigning → BearerAuth (401 / expiry code: refresh once, replay once)
///           → CommonParameters → validation and error mapping (the client)
/// ```
///
/// Why this order:
/// - Common parameters come first so that both signatures cover them.
/// - Auth sits outside the signing stages, so its replay re-runs them: a replayed call gets a fresh
///   timestamp and nonce (the verifier would reject the old ones as a replay).
/// - `ParameterSigning` works on parameters (query and payload), so it is a shaping-role stage.
/// - Encryption runs before request signing on the way out (it is the outer of the two network stages), so
///   the signature covers the bytes actually sent — the ciphertext. A server verifies the signature and
///   replay window first and decrypts only authentic requests; on the way back the response signature is
///   checked over the received (encrypted) bytes before they are decrypted. (The issue sketched
///   "signing → encryption"; signing the plaintext would leave the sent bytes covered only by the AEAD tag
///   and make the server decrypt before it can reject a replay.)
///
/// Each stage has a fixed `Interceptor.name` for traces, and the trace redacts the values of
/// `Authorization`, `X-Courier-Key-Id` and `X-Courier-Signature`.
///
/// ```swift
/// var stack = SecurityStack()
/// stack.commonParameters = CommonParameters(placement: .body, [.constant("app_version", "1.4.2")])
/// stack.auth = BearerAuth(store: tokens)
/// stack.encryption = EnvelopeEncryption(sealer: EnvelopeSealer(keys: ring))
/// stack.signing = RequestSigning(key: signingKey)
/// let secure = APIModule(name: "secure", service: api).secured(stack)
/// ```
public struct SecurityStack: Sendable {
    /// Common parameters (shaping role).
    public var commonParameters: CommonParameters?
    /// Bearer auth with refresh (shaping role).
    public var auth: BearerAuth?
    /// The legacy sorted-parameter signature (shaping role).
    public var parameterSigning: ParameterSigning?
    /// Body encryption (network role).
    public var encryption: EnvelopeEncryption?
    /// HMAC request signing (network role).
    public var signing: RequestSigning?

    /// An empty stack; set the stages you need.
    public init() {}

    /// The stage names in chain order, with the built-in stages and the transport for reference (see
    /// `Interceptor` for the role order).
    public static let order = [
        "result", "CommonParameters", "BearerAuth", "ParameterSigning", "routing", "errorMapping", "codec",
        "redirects", "EnvelopeEncryption", "RequestSigning", "transport",
    ]

    /// The configured stages, outermost first.
    public var interceptors: [any Interceptor] {
        var stages: [any Interceptor] = []
        if let commonParameters { stages.append(commonParameters) }
        if let auth { stages.append(auth) }
        if let parameterSigning { stages.append(parameterSigning) }
        if let encryption { stages.append(encryption) }
        if let signing { stages.append(signing) }
        return stages
    }
}

extension APIModule {
    /// This module with `stack`'s stages appended to its interceptors, in the stack's order.
    ///
    /// ```swift
    /// let secure = APIModule(name: "secure", service: api).secured(stack)
    /// ```
    public func secured(_ stack: SecurityStack) -> APIModule {
        var module = self
        module.interceptors += stack.interceptors
        return module
    }
}
#endif
