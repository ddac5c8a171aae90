import Courier
import CourierCodecs
import CourierTestSupport
@testable import CourierTesting
import Foundation
import Testing

/// The fuzz targets' property (CourierTesting's `FuzzOracle`), configured as in `Fuzz/Sources/*`, over the
/// committed seed corpora in `Fixtures/fuzz/`, which hold every crash the fuzzers found: each keeps its
/// regression test in `make test`, not only in `make fuzz`. `COURIER_FUZZ_CORPUS=<folder>` adds a grown
/// corpus (e.g. `Fuzz/corpus-work`) to the check.
@Suite struct FuzzCorpusTests {
    static func oracles(for target: String) throws -> [FuzzOracle] {
        switch target {
        case "FuzzJSON":
            var options = JSONCodec.Options()
            options.maximumDepth = 128
            return [FuzzOracle(codec: JSONCodec(options: options))]
        case "FuzzXML":
            var options = XMLCodec.Options()
            options.maximumDepth = 64
            var oracle = FuzzOracle(codec: XMLCodec(options: options))
            oracle.acceptedEncodingFailures = [.encodingFailed]
            oracle.requiresStableEncoding = false
            return [oracle]
        default:
            let schema = try ProtobufSchema(contentsOf: Repository.schema("demo.pb"))
            var hints = CodingHints()
            hints.messageType = "demo.UserListResponse"
            var lenient = ProtobufCodec.Options()
            lenient.unknownFields = .discard
            lenient.includeDefaultValues = false
            return [ProtobufCodec(schema: schema), ProtobufCodec(schema: schema, options: lenient)].map {
                var oracle = FuzzOracle(codec: $0, hints: hints)
                oracle.requiresStableEncoding = false
                return oracle
            }
        }
    }

    @Test(arguments: ["FuzzJSON", "FuzzXML", "FuzzProtobuf"])
    func everySavedInputHoldsTheFuzzProperty(target: String) throws {
        var folders = [Repository.root.appendingPathComponent("Fixtures/fuzz/\(target)")]
        if let extra = ProcessInfo.processInfo.environment["COURIER_FUZZ_CORPUS"], !extra.isEmpty {
            folders.append(URL(fileURLWithPath: extra).appendingPathComponent(target))
        }
        var checked = 0
        for folder in folders {
            checked += try FileManager.default.contentsOfDirectory(atPath: folder.path).count
            for oracle in try Self.oracles(for: target) {
                let violations = try oracle.check(folder: folder)
                #expect(violations.isEmpty, "\(violations.map(\.description).joined(separator: "\n"))")
            }
        }
        #expect(checked >= 5)
    }

    /// Shape-guided XML decoding is not reversible (an empty array leaves no element), so the fuzzer holds
    /// it only to failing with CourierErrors.
    @Test func shapedXMLDecodingFailsOnlyWithCourierErrors() throws {
        let folder = Repository.root.appendingPathComponent("Fixtures/fuzz/FuzzXML")
        var hints = CodingHints()
        hints.shape = ValueShape(of: FixtureFormatsTests.Envelope.self)
        var decoded = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            do {
                _ = try XMLCodec().decode(Data(contentsOf: folder.appendingPathComponent(name)), hints: hints)
                decoded += 1
            } catch {
                #expect(error is CourierError, "\(name): \(error)")
            }
        }
        #expect(decoded >= 1)
    }

    @Test func theOracleReportsEachKindOfViolation() throws {
        /// A codec whose encoder misbehaves in a chosen way.
        struct Faulty: Codec {
            enum Fault { case none, foreign, encodeFails, changes, unstable }
            var fault: Fault
            var format: ContentFormat { .json }
            final class Counter: @unchecked Sendable { var n = 0 }
            let counter = Counter()
            func decode(_ data: Data, hints: CodingHints) throws -> Value {
                if fault == .foreign { throw CocoaError(.fileReadCorruptFile) }
                if data.first == UInt8(ascii: "!") { throw CourierError(.malformedInput) }
                return try JSONCodec().decode(data, hints: hints)
            }
            func encode(_ value: Value, hints: CodingHints) throws -> Data {
                counter.n += 1
                switch fault {
                case .encodeFails: throw CourierError(.encodingFailed)
                case .changes: return Data("[0]".utf8)
                case .unstable: return Data((counter.n == 1 ? "[1]" : "[1.0]").utf8)
                default: return try JSONCodec().encode(value, hints: hints)
                }
            }
        }
        let input = Data("[1]".utf8)
        #expect(FuzzOracle(codec: Faulty(fault: .none)).check(input) == nil)
        #expect(FuzzOracle(codec: Faulty(fault: .none)).check(Data("!".utf8)) == nil)
        #expect(FuzzOracle(codec: Faulty(fault: .foreign)).check(input)?.kind == .foreignError)
        #expect(FuzzOracle(codec: Faulty(fault: .encodeFails)).check(input)?.kind == .encodingFailed)
        var tolerant = FuzzOracle(codec: Faulty(fault: .encodeFails))
        tolerant.acceptedEncodingFailures = [.encodingFailed]
        #expect(tolerant.check(input) == nil)
        #expect(FuzzOracle(codec: Faulty(fault: .changes)).check(input)?.kind == .valueChanged)
        #expect(FuzzOracle(codec: Faulty(fault: .unstable)).check(input)?.kind == .unstableEncoding)
        var lax = FuzzOracle(codec: Faulty(fault: .unstable))
        lax.requiresStableEncoding = false
        #expect(lax.check(input) == nil)
        // NaN equals NaN for the oracle, not for Value's ==.
        #expect(FuzzOracle.same(.array([.double(.nan)]), .array([.double(.nan)])))
    }
}
