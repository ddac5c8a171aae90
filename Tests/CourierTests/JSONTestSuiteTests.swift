import Courier
import CourierTestSupport
import Foundation
import Testing

/// Runs every file of Nicolas Seriot's JSONTestSuite (`test_parsing`): `y_` files must be accepted,
/// `n_` files rejected, and `i_` files either accepted or rejected with a `CourierError`.
@Suite struct JSONTestSuiteTests {
    // Skipped by name when the suite is missing; under CI=true it runs and fails instead.
    @Test(.enabled(
        if: Repository.runsExternalSuite("JSONTestSuite/test_parsing"),
        "JSONTestSuite not found: set COURIER_TEST_SUITES or add ../shared/test-suites"))
    func parsingSuite() throws {
        guard let directory = Repository.externalSuite("JSONTestSuite/test_parsing") else { return }
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".json") }.sorted()
        #expect(files.count > 300)
        let codec = JSONCodec()
        var accepted = (y: 0, n: 0, i: 0)
        var rejected = (y: 0, n: 0, i: 0)
        for name in files {
            let data = try Data(contentsOf: directory.appendingPathComponent(name))
            let result = Result { try codec.decode(data, hints: CodingHints()) }
            switch (name.first, result) {
            case ("y", .success(let value)):
                accepted.y += 1
                // What was accepted must re-encode to JSON that decodes to an equal value.
                let again = try codec.decode(codec.encode(value) as [UInt8])
                #expect(again == value, "\(name) does not round-trip")
            case ("y", .failure(let error)):
                rejected.y += 1
                Issue.record("\(name) should be accepted: \(error)")
            case ("n", .success):
                accepted.n += 1
                Issue.record("\(name) should be rejected")
            case ("n", .failure(let error)):
                rejected.n += 1
                #expect(error is CourierError, "\(name): \(error)")
            case ("i", .success): accepted.i += 1
            case ("i", .failure(let error)):
                rejected.i += 1
                #expect(error is CourierError, "\(name): \(error)")
            default: break
            }
        }
        print("JSONTestSuite: y_ \(accepted.y) accepted / \(rejected.y) rejected; n_ \(rejected.n) rejected / \(accepted.n) accepted; i_ \(accepted.i) accepted, \(rejected.i) rejected")
        #expect(rejected.y == 0)
        #expect(accepted.n == 0)
        #expect(accepted.y > 90 && rejected.n > 180)
    }
}
