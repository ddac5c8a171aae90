#if Cache
import CourierCache
import CourierTestSupport
import Testing

@Suite struct CacheCodesTests {
    @Test func cacheMissIsAConfigurationError() {
        #expect(CourierError.Code.cacheMiss.category == .configuration)
        #expect(CourierError.Code.cacheMiss.number == 9005)
        #expect(CourierError.Code.cacheMiss.name == "cacheMiss")
        #expect(CourierError(.cacheMiss).message == "No cached response is available.")
        #expect(CourierError(.cacheMiss).message(in: .simplifiedChinese) == "没有可用的缓存数据~")
        #expect("\(CourierError(.cacheMiss))" == "[configuration.cacheMiss 9005] No cached response is available.")
        #expect(!CourierError.Code.allCases.contains(.cacheMiss))   // CourierCache's, not the core's
    }
}
#endif
