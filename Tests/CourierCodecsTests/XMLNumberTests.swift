import Courier
import Foundation
import Testing

@testable import CourierCodecs

/// Numbers read without `strtod` (``XMLMapping/exactDouble(_:)``) are the `Double`s `Double(text)` gives,
/// bit for bit, and whatever that fast path declines still reads through `Double(text)`.
@Suite struct XMLNumberTests {
    static func exact(_ text: String) -> Double? {
        Array(text.utf8).withUnsafeBufferPointer { XMLMapping.exactDouble($0) }
    }

    static func number(_ text: String) -> Value? {
        Array(text.utf8).withUnsafeBufferPointer { XMLMapping.number($0) }
    }

    @Test(arguments: [
        "808.78", "0.1", "-0.0", "+.5", "5.", ".5e+2", "1e22", "1e-22", "123456789012345", "0.000123456789012345",
        "9007199254740993e-15", "4.9406564584124654e-324", "1.7976931348623157e308", "0000000000000000000001.25",
        "-12.5E-3", "3.14159265358979",
    ])
    func knownNumbers(text: String) throws {
        if let fast = Self.exact(text) {
            let reference = try #require(Double(text))
            #expect(fast.bitPattern == reference.bitPattern, "\(text)")
        }
        #expect(Self.number(text) != nil, "\(text)")
    }

    @Test(arguments: ["", ".", "-", "e5", "1e", "1.2.3", "0x1p3", "1_0", "1e+", "INF", "NaN", "1.5f"])
    func notExactNumbers(text: String) {
        #expect(Self.exact(text) == nil, "\(text)")
    }

    /// 100,000 random decimals: signs, leading zeros, points anywhere, exponents around the fast range.
    @Test func randomDecimalsMatchDoubleParsing() throws {
        var generator = SystemRandomNumberGenerator()
        var fastCount = 0
        for _ in 0..<100_000 {
            var text = ["", "-", "+"].randomElement(using: &generator)!
            text += String(repeating: "0", count: Int.random(in: 0...2, using: &generator))
            let length = Int.random(in: 1...18, using: &generator)
            var digits = (0..<length).map { _ in Character(String(Int.random(in: 0...9, using: &generator))) }
            if Bool.random(using: &generator) {
                digits.insert(".", at: Int.random(in: 0...digits.count, using: &generator))
            }
            text += String(digits)
            if Bool.random(using: &generator) {
                text += ["e", "E"].randomElement(using: &generator)! + ["", "-", "+"].randomElement(using: &generator)!
                text += String(Int.random(in: 0...40, using: &generator))
            }
            guard let fast = Self.exact(text) else { continue }
            fastCount += 1
            let reference = try #require(Double(text), "\(text)")
            #expect(fast.bitPattern == reference.bitPattern, "\(text)")
        }
        #expect(fastCount > 10_000)
    }
}
