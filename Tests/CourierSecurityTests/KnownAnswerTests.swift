#if Security
import Crypto
import Foundation
import HTTPTypes
import Testing
@testable import CourierSecurity

/// Published vectors, and fixed vectors of our own formats computed independently (python3 hashlib/hmac
/// and the `cryptography` package) and hard-coded here.
@Suite struct KnownAnswerTests {
    // RFC 4231, HMAC-SHA-256 results of test cases 1–4, 6 and 7.
    static let rfc4231: [(case: Int, key: [UInt8], data: [UInt8], mac: String)] = [
        (1, Array(repeating: 0x0b, count: 20), Array("Hi There".utf8),
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        (2, Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        (3, Array(repeating: 0xaa, count: 20), Array(repeating: 0xdd, count: 50),
         "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        (4, bytes("0102030405060708090a0b0c0d0e0f10111213141516171819"), Array(repeating: 0xcd, count: 50),
         "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        (6, Array(repeating: 0xaa, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        (7, Array(repeating: 0xaa, count: 131),
         Array(("This is a test using a larger than block-size key and a larger than block-size data. The key needs "
             + "to be hashed before being used by the HMAC algorithm.").utf8),
         "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
    ]

    @Test(arguments: rfc4231.indices)
    func hmacSHA256MatchesRFC4231(_ index: Int) {
        let vector = Self.rfc4231[index]
        let mac = HMAC<SHA256>.authenticationCode(for: vector.data, using: SymmetricKey(data: vector.key))
        #expect(hex(mac) == vector.mac, "RFC 4231 test case \(vector.case)")
        // The helper the signers use produces the same hex.
        #expect(Hex.encode(mac) == vector.mac)
    }

    // The GCM specification (McGrew & Viega), test cases 13–16: AES-256.
    static let k15 = bytes("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308")
    static let p15 = bytes("d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
                           + "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255")
    static let c15 = "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
        + "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad"
    static let iv15 = bytes("cafebabefacedbaddecaf888")
    static let gcm: [(case: Int, key: [UInt8], iv: [UInt8], plaintext: [UInt8], aad: [UInt8], ciphertext: String, tag: String)] = [
        (13, Array(repeating: 0, count: 32), Array(repeating: 0, count: 12), [], [], "",
         "530f8afbc74536b9a963b4f1c4cb738b"),
        (14, Array(repeating: 0, count: 32), Array(repeating: 0, count: 12), Array(repeating: 0, count: 16), [],
         "cea7403d4d606b6e074ec5d3baf39d18", "d0d1c8a799996bf0265b98b5d48ab919"),
        (15, k15, iv15, p15, [], c15, "b094dac5d93471bdec1a502270e3cc6c"),
        (16, k15, iv15, Array(p15.prefix(60)), bytes("feedfacedeadbeeffeedfacedeadbeefabaddad2"),
         String(c15.prefix(120)), "76fc6ece0f4e1768cddf8853bb2d551b"),
    ]

    @Test(arguments: gcm.indices)
    func aes256GCMMatchesTheSpecification(_ index: Int) throws {
        let v = Self.gcm[index]
        let key = SymmetricKey(data: v.key)
        let box = try AES.GCM.seal(v.plaintext, using: key, nonce: AES.GCM.Nonce(data: v.iv), authenticating: v.aad)
        #expect(hex(box.ciphertext) == v.ciphertext, "GCM test case \(v.case)")
        #expect(hex(box.tag) == v.tag, "GCM test case \(v.case)")
        let opened = try AES.GCM.open(box, using: key, authenticating: v.aad)
        #expect(Array(opened) == v.plaintext)
    }

    /// The envelope around test case 15's key, IV and plaintext: the ciphertext is the specification's, the
    /// tag covers the envelope header `01 02 "k1"` as AAD (computed with python `cryptography`).
    @Test func gcmEnvelopeLayoutIsFixed() throws {
        let key = try EncryptionKey(id: "k1", key: SymmetricKey(data: Self.k15))
        let sealer = EnvelopeSealer(keys: KeyRing(current: key))
        let envelope = try sealer.sealBinary(Data(Self.p15), key: key, algorithm: .aes256GCM, iv: Self.iv15)
        #expect(hex(envelope) == "01026b31" + "cafebabefacedbaddecaf888" + Self.c15 + "c2d6d9139c0aa91dbda023c66575cb53")
        #expect(Array(try sealer.open(envelope)) == Self.p15)

        let zero = try EncryptionKey(id: "k1", key: SymmetricKey(data: [UInt8](repeating: 0, count: 32)))
        let zeroEnvelope = try sealer.sealBinary(Data(count: 16), key: zero, algorithm: .aes256GCM,
                                                 iv: [UInt8](repeating: 0, count: 12))
        #expect(hex(zeroEnvelope) == "01026b31" + "000000000000000000000000"
                + "cea7403d4d606b6e074ec5d3baf39d18" + "77bbc0fe4d407e3e868ef707b09b15b5")
    }

    /// Legacy mode: NIST SP 800-38A F.2.5 (CBC-AES256) — the first two ciphertext blocks are the
    /// specification's, the third is the PKCS#7 padding block.
    @Test func cbcEnvelopeMatchesNISTSP80038A() throws {
        let key = try EncryptionKey(
            id: "k1", key: SymmetricKey(data: bytes("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4")),
            macKey: SymmetricKey(data: Array(repeating: UInt8(7), count: 32)))
        let sealer = EnvelopeSealer(keys: KeyRing(current: key), algorithm: .aes256CBCHMACSHA256)
        let plaintext = bytes("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51")
        let envelope = try sealer.sealBinary(Data(plaintext), key: key, algorithm: .aes256CBCHMACSHA256,
                                             iv: bytes("000102030405060708090a0b0c0d0e0f"))
        let body = Array(envelope)
        #expect(hex(body[0..<4]) == "02026b31")
        #expect(hex(body[4..<20]) == "000102030405060708090a0b0c0d0e0f")
        #expect(hex(body[20..<68]) == "f58c4c04d6e5f1ba779eabfb5f7bfbd69cfc4e967edb808d679f777bc6702c7d"
                + "3a3aa5e0213db1a9901f9036cf5102d2")
        let mac = HMAC<SHA256>.authenticationCode(for: body[0..<68], using: SymmetricKey(data: Array(repeating: UInt8(7), count: 32)))
        #expect(Array(body[68...]) == Array(mac))
        #expect(Array(try sealer.open(envelope)) == plaintext)
    }

    /// The canonical request string and its signature for a fixed request (signature computed with
    /// python3 `hmac`/`hashlib` from the documented layout).
    @Test func canonicalRequestVector() {
        var fields = HTTPFields()
        fields[.contentType] = "application/json"
        fields[HTTPField.Name("X-App-Version")!] = "  1.4.2 "
        fields[HTTPField.Name("X-Unsigned")!] = "ignored"
        let body = Data(#"{"name":"Ada","age":36}"#.utf8)
        let canonical = CanonicalRequest(
            method: .post, path: "/v1/users/7?b=z&a=1&%C3%A9t%C3%A9=%E2%82%AC&b=x%20y&flag", headerFields: fields,
            signedHeaders: ["X-App-Version", "content-type"], keyID: "app-2026", timestamp: 1_767_225_600,
            nonce: "0123456789abcdef0123456789abcdef", body: body)
        #expect(canonical.string == """
            COURIER-HMAC-SHA256
            POST
            /v1/users/7
            a=1&b=x%20y&b=z&flag&%C3%A9t%C3%A9=%E2%82%AC
            content-type;x-app-version
            content-type:application/json
            x-app-version:1.4.2
            app-2026
            1767225600
            0123456789abcdef0123456789abcdef
            b6a2233dfaeac88cfcb2e6a991280232a5f2a6f21d4811e5f2b8e270f19b0a98
            """)
        let secret = SymmetricKey(data: Data("courier-demo-secret".utf8))
        #expect(canonical.signature(using: secret) == "a0870ace65ee76db28df315111c92182eaae3a4069301cc113ff15ad4b7feb3a")

        // The interceptor's signing of the same request writes the same signature.
        var options = RequestSigning.Options()
        options.signedHeaderFields = ["content-type", "x-app-version"]
        let signing = RequestSigning(key: SigningKey(id: "app-2026", secret: "courier-demo-secret"), options: options)
        var head = HTTPRequest(method: .post, scheme: "http", authority: "h",
                               path: "/v1/users/7?b=z&a=1&%C3%A9t%C3%A9=%E2%82%AC&b=x%20y&flag", headerFields: fields)
        signing.sign(&head, body: body, timestamp: 1_767_225_600, nonce: "0123456789abcdef0123456789abcdef")
        #expect(head.headerFields[HTTPField.Name("X-Courier-Signature")!]
                == "a0870ace65ee76db28df315111c92182eaae3a4069301cc113ff15ad4b7feb3a")
        #expect(head.headerFields[HTTPField.Name("X-Courier-Signed-Headers")!] == "content-type;x-app-version")
        #expect(head.headerFields[HTTPField.Name("X-Courier-Key-Id")!] == "app-2026")
        #expect(head.headerFields[HTTPField.Name("X-Courier-Timestamp")!] == "1767225600")
    }

    @Test func canonicalResponseVector() {
        let secret = SymmetricKey(data: Data("courier-demo-secret".utf8))
        let canonical = CanonicalResponse(status: 200, keyID: "app-2026",
                                          requestNonce: "0123456789abcdef0123456789abcdef", body: Data(#"{"code":0}"#.utf8))
        #expect(canonical.signature(using: secret) == "5f1236041f58be626a4c3b37bec208c83544247bef5c21522c4006d1b1538b00")
    }

    /// Sorted-parameter signatures: the widely published WeChat Pay v2 example (MD5, `&key=`, upper case),
    /// and vectors for the other settings computed with python3 hashlib/hmac.
    @Test func sortedParameterVectors() {
        let wechat = [QueryItem("appid", "wxd930ea5d5a258f4f"), QueryItem("mch_id", "10000100"),
                      QueryItem("device_info", "1000"), QueryItem("body", "test"),
                      QueryItem("nonce_str", "ibuaiVcKdpRxkhJA"), QueryItem("empty", ""), QueryItem("sign", "x")]
        let signer = ParameterSigner(secret: "192006250b4c09247ec02edce69f6a2d")
        #expect(signer.canonicalString(for: wechat, excluding: "sign")
                == "appid=wxd930ea5d5a258f4f&body=test&device_info=1000&mch_id=10000100&nonce_str=ibuaiVcKdpRxkhJA")
        #expect(signer.signature(for: wechat, excluding: "sign") == "9A0A8659F005D6984697E2CA0A9CF3B7")

        let top = [QueryItem("method", "item.get"), QueryItem("app_key", "12345"), QueryItem("v", "2.0"),
                   QueryItem("timestamp", "2026-01-01 00:00:00"), QueryItem("format", "json"),
                   QueryItem("sign_method", "md5")]
        var topOptions = ParameterSigner.Options()
        topOptions.pairFormat = .concatenated
        topOptions.separator = ""
        topOptions.secretPlacement = .surrounding
        #expect(ParameterSigner(secret: "secret", options: topOptions).signature(for: top)
                == "211FB5292B97055D612274C8FF69D059")

        let simple = [QueryItem("c", "three"), QueryItem("a", "1"), QueryItem("b", "2")]
        var sha1 = ParameterSigner.Options()
        sha1.digest = .sha1
        sha1.letterCase = .lower
        sha1.separator = "|"
        sha1.secretPlacement = .appended
        #expect(ParameterSigner(secret: "SECRET", options: sha1).signature(for: simple)
                == "bbe1e899835aafbf5ca9895b111118f988a9688f")
        var sha256 = ParameterSigner.Options()
        sha256.digest = .sha256
        #expect(ParameterSigner(secret: "SECRET", options: sha256).signature(for: simple)
                == "D596E799730FBA53E595B9EBD94BD2E26098E31E5742E622CF9B626E86A3A3E4")
        var hmac = ParameterSigner.Options()
        hmac.digest = .hmacSHA256
        hmac.letterCase = .lower
        hmac.secretPlacement = .none
        #expect(ParameterSigner(secret: "SECRET", options: hmac).signature(for: simple)
                == "43a9facff2ef1ae761c3a1c180e772fd276b3c31ac6377b202e33e9cb74eb6cf")
    }
}
#endif
