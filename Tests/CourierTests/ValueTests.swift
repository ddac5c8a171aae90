import Courier
import Testing

@Suite struct ValueTests {
    @Test func numbersCompareByMathematicalValue() {
        #expect(Value.int(1) == .double(1.0))
        #expect(Value.number("1.0e0") == .int(1))
        #expect(Value.number("12345678901234567890123") != .number("12345678901234567890124"))
        #expect(Value.uint(10_000_000_000_000_000_000) == .double(1e19))
        #expect(Value.int(Int64.max) != .double(9.223372036854775807e18))
        #expect(Value.string("1") != .int(1))
        var set = Set<Value>()
        set.insert(.int(3))
        set.insert(.double(3))
        set.insert(.number("3.000"))
        #expect(set.count == 1)
    }

    @Test func numbersBeyondExactRangeCompareBySpelling() {
        #expect(Value.number("1e9999999999999") == .number("1e9999999999999"))
        #expect(Value.number("1e9999999999999") != .number("2e9999999999999"))
        #expect(Value.number("1e9999999999999") != .double(1))
        #expect(Set<Value>([.number("1e9999999999999"), .number("2e9999999999999")]).count == 2)
    }

    @Test func objectsKeepOrderAndCompareUnordered() {
        let a: Value = ["b": 1, "a": 2]
        let b: Value = ["a": 2, "b": 1]
        #expect(a == b)
        #expect(a.objectValue?.keys == ["b", "a"])
        #expect(a.hashValue == b.hashValue)
    }

    @Test func largeObjectsIndexTheirKeys() {
        var object = Value.Object()
        for i in 0..<100 { object["k\(i)"] = .int(Int64(i)) }
        #expect(object["k57"] == .int(57))
        object["k57"] = nil
        #expect(object["k57"] == nil)
        #expect(object["k58"] == .int(58))
        #expect(object.count == 99)
        #expect(object.keys.first == "k0")
    }

    @Test func exactDecimalsNormaliseAndConvertToInt64Exactly() throws {
        let small = try #require(ExactDecimal(lexical: "0.0750"))
        #expect(small.digits == [7, 5] && small.exponent == -3 && !small.negative)
        #expect(ExactDecimal(lexical: "-0.0")?.isZero == true)
        #expect(ExactDecimal(lexical: "-9223372036854775808")?.int64 == Int64.min)
        // Its fields are public: an exponent at the end of `Int` is far beyond `Int64`, not an overflow.
        var huge = try #require(ExactDecimal(lexical: "1"))
        huge.exponent = .max
        #expect(huge.int64 == nil)
        huge.exponent = .min
        #expect(huge.int64 == nil)
        #expect(ExactDecimal(lexical: "9223372036854775807")?.int64 == Int64.max)
        #expect(ExactDecimal(lexical: "9223372036854775808")?.int64 == nil)
        #expect(ExactDecimal(lexical: "12e3")?.int64 == 12_000)
        #expect(ExactDecimal(lexical: "1e999999999999999") == nil)
        #expect(ExactDecimal(lexical: "abc") == nil)
        // Found by FuzzJSON: an exponent of Int.min must be refused, not overflow.
        #expect(ExactDecimal(lexical: "5e-9223372036854775808") == nil)
        #expect(ExactDecimal(lexical: "184e-9223372036854775809") == nil)
        #expect(ExactDecimal(lexical: "1e+1099511627776") == nil)
        #expect(ExactDecimal(lexical: "1e+1099511627775")?.exponent == 1_099_511_627_775)
        #expect(ExactDecimal(lexical: "-1e-1099511627775")?.exponent == -1_099_511_627_775)
        #expect(ExactDecimal(lexical: "1e-") == nil)
        #expect(ExactDecimal(lexical: "1e5x") == nil)
        #expect(ExactDecimal(Value.double(1e19)) == ExactDecimal(Value.uint(10_000_000_000_000_000_000)))
    }

    @Test func pathsRender() {
        let path: [PathComponent] = ["data", "users", 3, "age"]
        #expect(PathComponent.render(path) == "data.users[3].age")
        #expect(PathComponent.jsonPointer(["a/b", "c~d", 0]) == "/a~1b/c~0d/0")
    }
}

@Suite struct ValueObjectStorageTests {
    /// A large object's names and their index are shared by its copies: changing one copy leaves the others.
    @Test func copiesOfIndexedObjectsAreIndependent() {
        var a = Value.Object()
        for i in 0..<20 { a.append("k\(i)", .int(Int64(i))) }
        let before = a
        var b = a
        b.append("extra", true)
        b["k3"] = nil
        a["k0"] = "changed"
        #expect(before.keys == (0..<20).map { "k\($0)" })
        #expect(before["k0"] == .int(0) && before["extra"] == nil && before.position(of: "k3") == 3)
        #expect(b.position(of: "extra") == 19 && b.position(of: "k4") == 3 && b["k3"] == nil)
        #expect(a["k0"] == "changed" && a["extra"] == nil && a.count == 20)
        let shared = Value.Object(uniqueKeys: before.keys, values: before.values)
        var grown = shared
        grown.append("k20", 20)
        #expect(shared.count == 20 && shared["k20"] == nil && grown.position(of: "k20") == 20)
    }

    /// Random edits of objects that cross the index threshold both ways agree with a plain list of pairs.
    @Test func agreesWithAListOfPairs() {
        var random = XorShift(seed: 0x5EED)
        var object = Value.Object()
        var model: [(String, Int64)] = []
        var snapshots: [(Value.Object, [(String, Int64)])] = []
        for step in 0..<4000 {
            let key = "k\(random.next() % 40)"
            let n = Int64(step)
            switch random.next() % 5 {
            case 0, 1, 2:
                object[key] = .int(n)
                if let i = model.firstIndex(where: { $0.0 == key }) { model[i].1 = n } else { model.append((key, n)) }
            case 3:
                object[key] = nil
                model.removeAll { $0.0 == key }
            default:
                snapshots.append((object, model))
            }
            #expect(object.keys == model.map(\.0))
            #expect(object.values == model.map { Value.int($0.1) })
            for probe in 0..<40 {
                #expect(object.position(of: "k\(probe)") == model.firstIndex { $0.0 == "k\(probe)" })
            }
        }
        for (copy, pairs) in snapshots {
            #expect(copy.keys == pairs.map(\.0))
            #expect(copy == Value.Object(pairs.map { ($0.0, Value.int($0.1)) }))
        }
    }
}

/// A small seeded generator (xorshift64), so that a failure repeats.
private struct XorShift {
    var state: UInt64
    init(seed: UInt64) { state = seed | 1 }
    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}

@Suite struct ValueObjectUniqueKeysTests {
    @Test func sharesKeysAndLooksUp() {
        let keys = (0..<20).map { "k\($0)" }
        let a = Value.Object(uniqueKeys: keys, values: (0..<20).map { Value.int(Int64($0)) })
        let b = Value.Object(uniqueKeys: Array(keys.prefix(2)), values: ["x", "y"])
        #expect(a["k17"] == .int(17))
        #expect(a.keys == keys)
        #expect(b["k1"] == "y")
        #expect(b == ["k0": "x", "k1": "y"])
    }
}
