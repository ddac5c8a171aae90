#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The classification of low-level failures that every transport shares: a socket error number, or the
/// text an HTTP library reports when it keeps no structured code. ``FoundationTransport`` and the
/// AsyncHTTPClient transport both map through here, so one failure has one code whichever transport saw it.
extension TransportFailure {
    /// The failure a socket error number stands for: `ECONNREFUSED`, `EHOSTUNREACH` and `EADDRNOTAVAIL`
    /// cannot connect; `ENETUNREACH` and `ENETDOWN` are not connected; `ETIMEDOUT` timed out; `ECONNRESET`,
    /// `ECONNABORTED`, `EPIPE` and `ENOTCONN` lost the connection; anything else is ``other``.
    ///
    /// ```swift
    /// throw TransportFailure(errno: ECONNREFUSED).error()   // CourierError .cannotConnect
    /// ```
    public init(errno code: Int32) {
        switch code {
        case ECONNREFUSED, EHOSTUNREACH, EADDRNOTAVAIL: self = .cannotConnect
        case ENETUNREACH, ENETDOWN: self = .notConnected
        case ETIMEDOUT: self = .timedOut
        case ECONNRESET, ECONNABORTED, EPIPE, ENOTCONN: self = .connectionLost
        default: self = .other
        }
    }

    /// The failure named by an error's text, for libraries that report some failures only as a message
    /// (libcurl under FoundationNetworking reports TLS failures as OpenSSL's message, and a dropped
    /// connection as "transfer closed with N bytes remaining to read", "Empty reply from server" or the
    /// system's "Connection reset by peer"); nil when the text names none of them.
    package init?(message text: String) {
        if ["SSL routines", "OpenSSL", "TLS", "certificate"].contains(where: text.contains) {
            self = .tlsFailure
        } else if ["transfer closed with", "Empty reply from server", "Connection reset by peer", "Broken pipe"]
            .contains(where: text.contains)
        {
            self = .connectionLost
        } else if ["Connection refused"].contains(where: text.contains) {
            self = .cannotConnect
        } else {
            return nil
        }
    }
}
