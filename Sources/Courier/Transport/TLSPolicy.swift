public import Foundation

/// Whom a transport trusts over TLS and how it identifies itself: custom trust roots (with or without the
/// system's), public-key pins, and a client certificate for mutual TLS. A value handed to a transport when
/// it is made; the default trusts the system's roots only, as every transport does without one.
///
/// Support per transport:
/// - `HTTPClientTransport` (product `CourierAsyncHTTPClient`) applies all of it.
/// - ``FoundationTransport`` refuses every policy but the default with
///   ``CourierError/Code/unsupportedByTransport``: FoundationNetworking on Linux offers no server-trust
///   challenge, client-certificate credential or per-session CA file (see the transport's documentation).
///
/// **Pins** follow HPKP and OkHttp's `CertificatePinner`: the base64 SHA-256 digest of the server
/// certificate's DER `SubjectPublicKeyInfo`, written `sha256/…` (or bare). The certificate chain is
/// verified first, as always; then the *leaf* certificate's key must match one of the pins, else the
/// connection is closed before any request is written and the call fails with
/// ``CourierError/Code/certificatePinMismatch``. Pin a backup key too, so a key rotation does not lock the
/// app out. A pinned transport sends nothing over plain `http` (there is no certificate to check), so a
/// redirect cannot downgrade a call out of its pins. Compute a pin with
/// `openssl x509 -in cert.pem -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`.
///
/// ```swift
/// let tls = try TLSPolicy(
///     trustRoots: [.file("/etc/courier/internal-ca.pem")],
///     pins: ["sha256/r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E="],
///     clientCertificate: .init(certificateChain: .file("client.pem"), privateKey: .file("client-key.pem")))
/// let transport = try HTTPClientTransport(tls: tls)
/// ```
public struct TLSPolicy: Hashable, Sendable {
    /// Certificate or key material: PEM text (one or more blocks), DER bytes, or a file holding either.
    ///
    /// New cases may be added in later versions: a `switch` over it should have a `default` branch.
    public enum Source: Hashable, Sendable {
        /// PEM text (`-----BEGIN CERTIFICATE-----` …); several certificates may follow one another.
        case pem(Data)
        /// One DER-encoded certificate or key.
        case der(Data)
        /// A file holding PEM or DER, read when the transport is made.
        case file(String)

        /// The bytes, read from the file if need be, and whether they are PEM.
        ///
        /// - Throws: ``CourierError/Code/invalidConfiguration`` when the file cannot be read.
        public func load() throws -> (bytes: [UInt8], isPEM: Bool) {
            switch self {
            case .pem(let data): return (Array(data), true)
            case .der(let data): return (Array(data), false)
            case .file(let path):
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw CourierError(.invalidConfiguration, detail: "the TLS file \(path) cannot be read")
                }
                return (Array(data), data.starts(with: Data("-----BEGIN".utf8)) || String(decoding: data.prefix(4096), as: UTF8.self).contains("-----BEGIN"))
            }
        }
    }

    /// The certificate and private key a client presents when the server asks for one (mutual TLS).
    public struct ClientCertificate: Hashable, Sendable {
        /// The client's certificate, leaf first, then any intermediates (PEM may hold the whole chain).
        public var certificateChain: Source
        /// The leaf certificate's private key, unencrypted (PKCS#8, PKCS#1 or SEC1; PEM or DER).
        public var privateKey: Source

        /// A client identity.
        public init(certificateChain: Source, privateKey: Source) {
            self.certificateChain = certificateChain
            self.privateKey = privateKey
        }
    }

    /// A public-key pin: the SHA-256 digest of a DER `SubjectPublicKeyInfo`.
    public struct Pin: Hashable, Sendable, CustomStringConvertible {
        /// The 32-byte digest.
        public let sha256: [UInt8]

        /// A pin from its text, `sha256/BASE64` or the bare base64 of the digest.
        ///
        /// - Throws: ``CourierError/Code/invalidConfiguration`` when the text is not the base64 of 32 bytes.
        public init(_ text: String) throws {
            var body = Substring(text.trimmingCharacters(in: .whitespaces))
            if body.hasPrefix("sha256/") { body = body.dropFirst("sha256/".count) }
            guard let digest = Data(base64Encoded: String(body)), digest.count == 32 else {
                throw CourierError(.invalidConfiguration,
                                   detail: "'\(text)' is not a pin (sha256/ and the base64 of a 32-byte SHA-256 digest)")
            }
            sha256 = Array(digest)
        }

        /// A pin from the 32-byte digest.
        ///
        /// - Throws: ``CourierError/Code/invalidConfiguration`` unless `sha256` holds 32 bytes.
        public init(sha256: [UInt8]) throws {
            guard sha256.count == 32 else {
                throw CourierError(.invalidConfiguration, detail: "a SHA-256 pin has 32 bytes, not \(sha256.count)")
            }
            self.sha256 = sha256
        }

        /// `sha256/BASE64`.
        public var description: String { "sha256/" + Data(sha256).base64EncodedString() }
    }

    /// Roots trusted besides (or instead of) the system's; empty: the system's only.
    public var trustRoots: [Source]
    /// Whether the system's roots are trusted too when ``trustRoots`` is not empty.
    public var trustsSystemRoots: Bool
    /// The public keys the server's leaf certificate must match one of (empty: no pinning).
    public var pins: [Pin]
    /// The identity presented when the server asks for a client certificate.
    public var clientCertificate: ClientCertificate?

    /// A policy.
    ///
    /// - Parameters:
    ///   - trustRoots: Root certificates to trust; when given, they replace the system's roots unless
    ///     `trustsSystemRoots` is true.
    ///   - trustsSystemRoots: Trust the system's roots too (default: only when `trustRoots` is empty).
    ///   - pins: `sha256/BASE64` pins of the server's public key (see the type's documentation).
    ///   - clientCertificate: The identity for mutual TLS.
    /// - Throws: ``CourierError/Code/invalidConfiguration`` for a malformed pin, or a policy that trusts no
    ///   root at all.
    public init(
        trustRoots: [Source] = [], trustsSystemRoots: Bool? = nil, pins: [String] = [],
        clientCertificate: ClientCertificate? = nil
    ) throws {
        let systemRoots = trustsSystemRoots ?? trustRoots.isEmpty
        guard systemRoots || !trustRoots.isEmpty else {
            throw CourierError(.invalidConfiguration, detail: "a TLS policy without trust roots must trust the system's")
        }
        self.trustRoots = trustRoots
        self.trustsSystemRoots = systemRoots
        self.pins = try pins.map(Pin.init)
        self.clientCertificate = clientCertificate
    }

    private init(system: Void) {
        trustRoots = []
        trustsSystemRoots = true
        pins = []
        clientCertificate = nil
    }

    /// The system's roots, no pins, no client certificate: what every transport does by default.
    public static let system = TLSPolicy(system: ())

    /// Whether the policy asks for nothing beyond the system's default (``system``).
    public var isSystemDefault: Bool { self == .system }

    /// Whether `digest` (the SHA-256 of a certificate's DER `SubjectPublicKeyInfo`) satisfies the pins
    /// (always, when there are none).
    public func accepts(publicKeyDigest digest: [UInt8]) -> Bool {
        pins.isEmpty || pins.contains { $0.sha256 == digest }
    }
}
