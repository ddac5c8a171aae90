#if Security
import Crypto
import _CryptoExtras
import Foundation
import HTTPTypes
import Testing
@testable import CourierSecurity

@Suite struct EnvelopeTests {
    static let plaintext = Data(#"{"card":"4111 1111 1111 1111","pin":"0000"}"#.utf8)

    static func key(_ id: String, _ fill: UInt8) throws -> EncryptionKey {
        try EncryptionKey(id: id, key: SymmetricKey(data: [UInt8](repeating: fill, count: 32)))
    }

    @Test(arguments: EnvelopeSealer.Algorithm.allCases, [EnvelopeSealer.Encoding.binary, .base64])
    func roundTrip(_ algorithm: EnvelopeSealer.Algorithm, _ encoding: EnvelopeSealer.Encoding) throws {
        let sealer = EnvelopeSealer(keys: KeyRing(current: try Self.key("k1", 1)), algorithm: algorithm, encoding: encoding)
        let envelope = try sealer.seal(Self.plaintext)
        #expect(envelope.range(of: Data("4111".utf8)) == nil)
        #expect(try sealer.open(envelope) == Self.plaintext)
        #expect(try sealer.open(try sealer.seal(Data())) == Data())
        if encoding == .base64 {
            #expect(String(data: envelope, encoding: .ascii).flatMap { Data(base64Encoded: $0) } != nil)
        }
        // Two seals of the same plaintext differ (fresh nonce / IV).
        #expect(try sealer.seal(Self.plaintext) != envelope)
    }

    /// A key given as bytes opens what its `SymmetricKey` form sealed; wrong sizes are configuration errors;
    /// random keys differ.
    @Test func keysFromBytes() throws {
        let bytes = [UInt8](repeating: 1, count: 32)
        let fromBytes = EnvelopeSealer(keys: KeyRing(current: try EncryptionKey(id: "k1", keyBytes: bytes)))
        let fromKey = EnvelopeSealer(keys: KeyRing(current: try Self.key("k1", 1)))
        #expect(try fromBytes.open(try fromKey.seal(Self.plaintext)) == Self.plaintext)
        let short = #expect(throws: CourierError.self) { try EncryptionKey(id: "k", keyBytes: bytes.prefix(16)) }
        #expect(short?.code == .invalidConfiguration)
        let weakMAC = #expect(throws: CourierError.self) {
            try EncryptionKey(id: "k", keyBytes: bytes, macKeyBytes: Data(count: 8))
        }
        #expect(weakMAC?.code == .invalidConfiguration)
        let random = EnvelopeSealer(keys: KeyRing(current: try EncryptionKey.random(id: "k1")))
        let foreign = #expect(throws: CourierError.self) { try random.open(try fromKey.seal(Self.plaintext)) }
        #expect(foreign?.code == .decryptionFailed)
    }

    @Test func keyRotationKeepsOldEnvelopesReadable() throws {
        let ring = KeyRing(current: try Self.key("2026-01", 1))
        let sealer = EnvelopeSealer(keys: ring)
        let old = try sealer.seal(Self.plaintext)
        ring.rotate(to: try Self.key("2026-02", 2))
        let new = try sealer.seal(Self.plaintext)
        #expect(Array(new[2..<9]) == Array("2026-02".utf8))
        #expect(Array(old[2..<9]) == Array("2026-01".utf8))
        #expect(try sealer.open(old) == Self.plaintext)
        #expect(try sealer.open(new) == Self.plaintext)
        #expect(ring.remove(id: "2026-02") == false)   // the current key stays
        #expect(ring.remove(id: "2026-01"))
        let error = #expect(throws: CourierError.self) { try sealer.open(old) }
        #expect(error?.code == .unknownKey)
        #expect(ring.ids == ["2026-02"])
    }

    /// Flips every bit of nonce, ciphertext and tag (GCM), or IV, ciphertext and MAC (CBC): each is a
    /// decryptionFailed. Header bits: the version → malformedEnvelope, the key id → unknownKey.
    @Test(arguments: EnvelopeSealer.Algorithm.allCases)
    func everyFlippedBitIsDetected(_ algorithm: EnvelopeSealer.Algorithm) throws {
        let sealer = EnvelopeSealer(keys: KeyRing(current: try Self.key("k1", 1)), algorithm: algorithm)
        let envelope = [UInt8](try sealer.seal(Self.plaintext))
        let header = 4
        for bit in 0..<(envelope.count * 8) {
            var tampered = envelope
            tampered[bit / 8] ^= 1 << (bit % 8)
            let error = #expect(throws: CourierError.self) { try sealer.open(Data(tampered)) }
            let byte = bit / 8
            let expected: CourierError.Code
            switch byte {
            case 0: expected = .malformedEnvelope
            case 1: expected = tampered[1] == 0 || Int(tampered[1]) + 2 + 28 > envelope.count
                ? .malformedEnvelope : .unknownKey
            case 2..<header: expected = .unknownKey
            default: expected = .decryptionFailed
            }
            if byte == 1 {
                #expect([CourierError.Code.malformedEnvelope, .unknownKey].contains(error?.code), "bit \(bit)")
            } else {
                #expect(error?.code == expected, "byte \(byte) bit \(bit % 8)")
            }
            #expect(error.map { String(describing: $0) }?.contains("4111") == false)
        }
    }

    @Test(arguments: EnvelopeSealer.Algorithm.allCases)
    func truncatedEnvelopesAreMalformed(_ algorithm: EnvelopeSealer.Algorithm) throws {
        let sealer = EnvelopeSealer(keys: KeyRing(current: try Self.key("k1", 1)), algorithm: algorithm)
        let envelope = try sealer.seal(Data("hi".utf8))
        let minimum = algorithm == .aes256GCM ? 4 + 12 + 16 : 4 + 16 + 16 + 32
        for length in 0..<minimum {
            let error = #expect(throws: CourierError.self) { try sealer.open(envelope.prefix(length)) }
            #expect(error?.code == .malformedEnvelope, "length \(length)")
        }
        if algorithm == .aes256CBCHMACSHA256 {
            // Not a whole number of blocks.
            let error = #expect(throws: CourierError.self) { try sealer.open(envelope.dropLast(1)) }
            #expect(error?.code == .malformedEnvelope)
        }
        let base64 = EnvelopeSealer(keys: sealer.keys, encoding: .base64)
        let error = #expect(throws: CourierError.self) { try base64.open(Data("not base64!".utf8)) }
        #expect(error?.code == .malformedEnvelope)
    }

    /// An authentic (MAC-valid) CBC envelope whose plaintext is not PKCS#7-padded: badPadding.
    @Test func badPaddingUnderAValidMAC() throws {
        let key = try Self.key("k1", 1)
        let sealer = EnvelopeSealer(keys: KeyRing(current: key), algorithm: .aes256CBCHMACSHA256)
        for lastBlock in [[UInt8](repeating: 0x41, count: 16), [UInt8](repeating: 0, count: 16),
                          [UInt8](repeating: 0x41, count: 14) + [2, 3], [UInt8](repeating: 17, count: 16)] {
            let iv = [UInt8](repeating: 9, count: 16)
            let ciphertext = try AES._CBC.encrypt(lastBlock, using: key.key, iv: AES._CBC.IV(ivBytes: iv), noPadding: true)
            var envelope = Data([2, 2]) + Data("k1".utf8) + Data(iv) + ciphertext
            envelope.append(contentsOf: HMAC<SHA256>.authenticationCode(for: envelope, using: key.macKey))
            let error = #expect(throws: CourierError.self) { try sealer.open(envelope) }
            #expect(error?.code == .badPadding)
        }
    }

    @Test func invalidKeysAreRefused() {
        let shortKey = #expect(throws: CourierError.self) { try EncryptionKey(id: "short", key: SymmetricKey(size: .bits128)) }
        #expect(shortKey?.code == .invalidConfiguration)
        let emptyID = #expect(throws: CourierError.self) { try EncryptionKey(id: "", key: SymmetricKey(size: .bits256)) }
        #expect(emptyID?.code == .invalidConfiguration)
        let longID = #expect(throws: CourierError.self) {
            try EncryptionKey(id: String(repeating: "x", count: 256), key: SymmetricKey(size: .bits256))
        }
        #expect(longID?.code == .invalidConfiguration)
    }

    @Test func messageHelpersCarryTheContentType() throws {
        let sealer = EnvelopeSealer(keys: KeyRing(current: try Self.key("k1", 1)), encoding: .base64)
        var fields: HTTPFields = [.contentType: "application/xml"]
        let body = try sealer.seal(Self.plaintext, headerFields: &fields)
        #expect(fields[.contentType] == "text/plain")
        #expect(fields[HTTPField.Name("X-Courier-Content-Type")!] == "application/xml")
        #expect(fields[HTTPField.Name("X-Courier-Encryption")!] == "aes-256-gcm; kid=k1; encoding=base64")
        let opened = try sealer.open(body, headerFields: &fields)
        #expect(opened == Self.plaintext)
        #expect(fields == [.contentType: "application/xml"])
        var plain: HTTPFields = [.contentType: "application/json"]
        #expect(try sealer.open(Data("{}".utf8), headerFields: &plain) == nil)
        var broken: HTTPFields = [HTTPField.Name("X-Courier-Encryption")!: "rot13"]
        let error = #expect(throws: CourierError.self) { try sealer.open(body, headerFields: &broken) }
        #expect(error?.code == .malformedEnvelope)
    }

    @Test func headerParsing() {
        #expect(EncryptionHeader("aes-256-cbc-hmac-sha256; kid=legacy")
                == EncryptionHeader(algorithm: .aes256CBCHMACSHA256, keyID: "legacy", encoding: .binary))
        #expect(EncryptionHeader("AES-256-GCM;kid=a;encoding=base64")?.encoding == .base64)
        #expect(EncryptionHeader("aes-256-gcm") == nil)
        #expect(EncryptionHeader("aes-128-gcm; kid=a") == nil)
        #expect(EncryptionHeader("aes-256-gcm; kid=a; encoding=hex") == nil)
    }
}
#endif
