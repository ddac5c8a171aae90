import Foundation
import Testing

import Courier

/// Arrays of `Bool`, `Float` and every fixed-width integer are read in one pass by the typed JSON decoder and
/// by `ValueDecoder` (no `Array.init(from:)` per element). Whatever either path reads, the values and the
/// errors (code and coding path) are those of the generic path.
@Suite struct ScalarArrayDecodingTests {
    struct Arrays: Codable, Equatable {
        var flags: [Bool]
        var ratios: [Float]
        var i8: [Int8]
        var i16: [Int16]
        var i32: [Int32]
        var i64: [Int64]
        var u: [UInt]
        var u8: [UInt8]
        var u16: [UInt16]
        var u32: [UInt32]
        var u64: [UInt64]
    }

    /// Decodes `json` typed (no tree) and through the `Value` tree; both must agree.
    private func both<T: Decodable & Equatable>(
        _ type: T.Type, _ json: String, decoder: ValueDecoder = ValueDecoder()
    ) throws -> T {
        let data = Data(json.utf8)
        let typed = try JSONCodec().decode(T.self, from: data, hints: CodingHints(), decoder: decoder)
        let pivot = try decoder.decode(T.self, from: JSONCodec().decode(data, hints: CodingHints()))
        #expect(typed == pivot)
        return typed
    }

    /// The error of each path for `json`, as code and coding path.
    private func failures<T: Decodable>(_ type: T.Type, _ json: String) -> [String] {
        let data = Data(json.utf8)
        var out: [String] = []
        for typed in [true, false] {
            do {
                _ = typed
                    ? try JSONCodec().decode(T.self, from: data, hints: CodingHints(), decoder: ValueDecoder())
                    : try ValueDecoder().decode(T.self, from: JSONCodec().decode(data, hints: CodingHints()))
                out.append("no error")
            } catch let error as CourierError {
                out.append("\(error.code) at \(error.context.codingPath)")
            } catch {
                out.append("\(error)")
            }
        }
        return out
    }

    @Test func everyWidthReadsItsRange() throws {
        let json = """
            {"flags":[true,false,true],"ratios":[1.5,-2,0,3.4028234e38],"i8":[-128,0,127],"i16":[-32768,32767],
             "i32":[-2147483648,2147483647],"i64":[-9223372036854775808,9223372036854775807],"u":[0,42],
             "u8":[0,255],"u16":[65535],"u32":[4294967295],"u64":[0,9223372036854775807,18446744073709551615]}
            """
        let arrays = try both(Arrays.self, json)
        #expect(arrays.flags == [true, false, true])
        #expect(arrays.ratios == [1.5, -2, 0, Float(3.4028234e38)])
        #expect(arrays.i8 == [.min, 0, .max] && arrays.i16 == [.min, .max] && arrays.i32 == [.min, .max])
        #expect(arrays.i64 == [.min, .max] && arrays.u == [0, 42] && arrays.u8 == [0, 255])
        #expect(arrays.u16 == [.max] && arrays.u32 == [.max])
        // Above `Int64.max` the element leaves the one-pass read; the generic path still reads it.
        #expect(arrays.u64 == [0, UInt64(Int64.max), .max])
        #expect(try both([Int8].self, "[]").isEmpty)
        #expect(try both([Float].self, "[]").isEmpty)
        #expect(try both([[UInt8]].self, "[[1,2],[],[3]]") == [[1, 2], [], [3]])
    }

    @Test func aFailingElementIsNamedAsTheGenericPathNamesIt() {
        let outOfRange = failures([Int8].self, "[1,2,300]")
        #expect(outOfRange[0] == outOfRange[1])
        #expect(outOfRange[0].contains("[2]") && outOfRange[0].hasPrefix("\(CourierError.Code.valueOutOfRange)"))
        // A float beyond `Float`'s range is out of range, not infinity.
        let huge = failures([Float].self, "[1,1e39]")
        #expect(huge[0] == huge[1] && huge[0].hasPrefix("\(CourierError.Code.valueOutOfRange)"))
        let negative = failures([UInt16].self, "[0,-1]")
        #expect(negative[0] == negative[1] && negative[0].contains("[1]"))
        let wrongType = failures([Bool].self, #"[true,"yes"]"#)
        #expect(wrongType[0] == wrongType[1] && wrongType[0].hasPrefix("\(CourierError.Code.typeMismatch)"))
        let fraction = failures([Int32].self, "[1,2.5]")
        #expect(fraction[0] == fraction[1] && fraction[0].contains("[1]"))
        let nested = failures(Arrays.self, """
            {"flags":[],"ratios":[],"i8":[],"i16":[],"i32":[],"i64":[],"u":[],"u8":[1,256],"u16":[],"u32":[],"u64":[]}
            """)
        #expect(nested[0] == nested[1] && nested[0].contains("u8") && nested[0].contains("[1]"))
    }

    @Test func lenientNumbersStillReadStringsAndWholeDoubles() throws {
        var lenient = ValueDecoder()
        lenient.lenientNumbers = true
        #expect(try both([UInt8].self, #"[1,"2",3]"#, decoder: lenient) == [1, 2, 3])
        #expect(try both([Float].self, #"[1,"2.5"]"#, decoder: lenient) == [1, 2.5])
        #expect(try both([Int16].self, "[1.0,2e2]") == [1, 200])
    }
}
