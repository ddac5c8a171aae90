#if Cache
import CourierCache
import CourierTestSupport
import Testing

@Suite struct CacheCodesTests {
    @Test func cacheMissIsAConfigurationError() {
        #expect(CourierError.Code.cacheMiss.category == .configuration)
        #expect(CourierError.Code.cacheMiss.number == 9005)
    }
}
#endif
