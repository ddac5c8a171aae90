// libFuzzer entry point for JSONCodec: any bytes must either decode or fail with a CourierError; what
// decodes must re-encode, and the re-encoded text must decode to an equal value and re-encode to the
// same bytes (compact output is canonical for a given Value). The property is CourierTesting's FuzzOracle;
// CourierCodecsTests.FuzzCorpusTests runs the same oracle over Fixtures/fuzz/FuzzJSON in `make test`.
import Courier
import CourierTesting
import Foundation

private let oracle: FuzzOracle = {
    var options = JSONCodec.Options()
    options.maximumDepth = 128
    return FuzzOracle(codec: JSONCodec(options: options))
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    oracle.assertHolds(Data(bytes: data, count: size))
    return 0
}
