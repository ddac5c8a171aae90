#if Security
import CourierSecurity
import Testing

@Suite struct SecurityCodesTests {
    @Test func securityCodesBelongToTheSecurityCategory() {
        for code in [CourierError.Code.signatureInvalid, .replayDetected, .decryptionFailed, .authentication] {
            #expect(code.category == .security)
        }
    }
}
#endif
