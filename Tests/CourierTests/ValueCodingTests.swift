import Courier
import CourierTestSupport
import Foundation
import Testing

private struct Page: Codable, Equatable {
    struct Address: Codable, Equatable {
        var city: String
        var street: String
        var zip: String
    }

    struct User: Codable, Equatable {
        var id: Int64
        var name: String
        var email: String
        var age: Int
        var score: Double
        var active: Bool
        var tags: [String]
        var address: Address
    }

    struct Payload: Codable, Equatable {
        var page: Int
        var total: Int
        var users: [User]
    }

    var code: Int
    var message: String
    var data: Payload
}

private struct Widths: Codable, Equatable {
    var i: Int, i8: Int8, i16: Int16, i32: Int32, i64: Int64
    var u: UInt, u8: UInt8, u16: UInt16, u32: UInt32, u64: UInt64
    var f: Float, d: Double

    static let max = Widths(
        i: .max, i8: .max, i16: .max, i32: .max, i64: .max, u: .max, u8: .max, u16: .max, u32: .max, u64: .max,
        f: .greatestFiniteMagnitude, d: .greatestFiniteMagnitude)
    static let min = Widths(
        i: .min, i8: .min, i16: .min, i32: .min, i64: .min, u: 0, u8: 0, u16: 0, u32: 0, u64: 0, f: -0.1, d: -0.1)
}

private enum Role: String, Codable, Equatable { case admin, member }
private enum Level: Int, Codable, Equatable { case low = 1, high = 9 }
private enum Shape: Codable, Equatable {
    case circle(radius: Double)
    case square(Double)
    case empty
}

private struct Options: Codable, Equatable {
    var nickname: String?
    var level: Level?
    var roles: [Role]
    var shape: Shape
    var extra: Value?
    var nested: [[Int?]]
}

/// Hand-written coding with nested containers.
private struct Point: Codable, Equatable {
    var x: Int
    var y: Int
    var labels: [String]

    enum Keys: String, CodingKey { case position, labels }
    enum PositionKeys: String, CodingKey { case x, y }

    init(x: Int, y: Int, labels: [String]) {
        self.x = x
        self.y = y
        self.labels = labels
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        let position = try container.nestedContainer(keyedBy: PositionKeys.self, forKey: .position)
        x = try position.decode(Int.self, forKey: .x)
        y = try position.decode(Int.self, forKey: .y)
        var labels = try container.nestedUnkeyedContainer(forKey: .labels)
        var collected: [String] = []
        while !labels.isAtEnd { collected.append(try labels.decode(String.self)) }
        self.labels = collected
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        var position = container.nestedContainer(keyedBy: PositionKeys.self, forKey: .position)
        try position.encode(x, forKey: .x)
        try position.encode(y, forKey: .y)
        var labels = container.nestedUnkeyedContainer(forKey: .labels)
        for label in self.labels { try labels.encode(label) }
    }
}

/// Class inheritance through superDecoder / superEncoder.
private class Animal: Codable {
    var name: String
    init(name: String) { self.name = name }
}

private final class Dog: Animal {
    var breed: String
    enum Keys: String, CodingKey { case breed }

    init(name: String, breed: String) {
        self.breed = breed
        super.init(name: name)
    }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        breed = try container.decode(String.self, forKey: .breed)
        try super.init(from: container.superDecoder())
    }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(breed, forKey: .breed)
        try super.encode(to: container.superEncoder())
    }
}

@Suite struct ValueCodingTests {
    let decoder = ValueDecoder()
    let encoder = ValueEncoder()

    func roundTrip<T: Codable & Equatable>(_ model: T, _ encoder: ValueEncoder = ValueEncoder(),
        _ decoder: ValueDecoder = ValueDecoder()) throws -> Value
    {
        let value = try encoder.encode(model)
        #expect(try decoder.decode(T.self, from: value) == model, "\(value)")
        // And through JSON text.
        let codec = JSONCodec()
        let reparsed = try codec.decode(codec.encode(value) as [UInt8])
        #expect(try decoder.decode(T.self, from: reparsed) == model)
        return value
    }

    @Test func decodesTheFixture() throws {
        let value = try JSONCodec().decode(Repository.fixture("users_10.json"), hints: CodingHints())
        let page = try value.decode(Page.self)
        #expect(page.data.users.count == 10)
        #expect(page.data.users[0].name == "Zoë Hernández")
        #expect(page.data.users[0].id == 1_000_000_000_000)
        // Encoding gives back the same value, members in declaration order (= the fixture's order).
        let encoded = try Value(encoding: page)
        #expect(encoded == value)
        #expect(try JSONCodec().encode(encoded) as [UInt8] == JSONCodec().encode(value) as [UInt8])
    }

    @Test func errorsNameTheCodingPath() throws {
        var value = try JSONCodec().decode(Repository.fixture("users_10.json"), hints: CodingHints())
        var users = try #require(value["data"]?["users"]?.arrayValue)
        users[3]["age"] = "forty"
        value["data"]?["users"] = .array(users)
        let error = try #require(throws: CourierError.self) { try value.decode(Page.self) }
        #expect(error.code == .typeMismatch)
        #expect(error.context.codingPath == ["data", "users", 3, "age"])
        #expect(error.message.contains("data.users[3].age"))
        #expect(error.message.contains("found string"))

        users[3]["age"] = nil
        value["data"]?["users"] = .array(users)
        let missing = try #require(throws: CourierError.self) { try value.decode(Page.self) }
        #expect(missing.code == .missingValue)
        #expect(missing.context.codingPath == ["data", "users", 3, "age"])

        users[3]["age"] = .int(1 << 40)
        value["data"]?["users"] = .array(users)
        struct Small: Decodable { var data: SmallPayload }
        struct SmallPayload: Decodable { var users: [SmallUser] }
        struct SmallUser: Decodable { var age: Int32 }
        let range = try #require(throws: CourierError.self) { try value.decode(Small.self) }
        #expect(range.code == .valueOutOfRange)
        #expect(range.message.contains("data.users[3].age"))
    }

    @Test func arrayErrorsNameTheIndex() throws {
        let error = try #require(throws: CourierError.self) {
            try ValueDecoder().decode([[Int]].self, from: [[1, 2], [3, "x"]])
        }
        #expect(error.code == .typeMismatch)
        #expect(error.context.codingPath == [1, 1])
        #expect(error.message.contains("[1][1]"))
        let short = try #require(throws: CourierError.self) {
            try ValueDecoder().decode(PairOfInts.self, from: [1])
        }
        #expect(short.code == .missingValue)
    }

    struct PairOfInts: Decodable {
        var a: Int
        var b: Int
        init(from decoder: any Decoder) throws {
            var c = try decoder.unkeyedContainer()
            a = try c.decode(Int.self)
            b = try c.decode(Int.self)
        }
    }

    @Test func allIntegerWidthsAreExact() throws {
        _ = try roundTrip(Widths.max)
        _ = try roundTrip(Widths.min)
        let value = try encoder.encode(Widths.max)
        #expect(value["u64"] == .uint(.max))
        #expect(value["f"] == .double(3.4028235e+38))  // the Float's shortest text, not its binary widening
        #expect(try encoder.encode(Widths.min)["f"] == .double(-0.1))

        #expect(try decoder.decode(UInt64.self, from: .number("18446744073709551615")) == .max)
        #expect(try decoder.decode(Int.self, from: .number("1.5e3")) == 1500)
        #expect(try decoder.decode(Int.self, from: .double(42)) == 42)
        #expect(try decoder.decode(Double.self, from: .int(7)) == 7)
        #expect(try decoder.decode(Double.self, from: .uint(.max)) == 18446744073709551615.0)
        for (value, type) in [
            (Value.int(128), Int8.self as any Decodable.Type), (.int(-1), UInt.self), (.uint(.max), Int64.self),
            (.number("18446744073709551616"), UInt64.self), (.int(70000), UInt16.self),
        ] {
            let error = try #require(throws: CourierError.self) { _ = try decoder.decode(type, from: value) }
            #expect(error.code == .valueOutOfRange, "\(value) as \(type)")
        }
        for (value, type) in [
            (Value.double(1.5), Int.self as any Decodable.Type), (.number("2.5"), Int64.self), (.string("1"), Int.self),
            (.bool(true), Int.self), (.string("1.5"), Double.self), (.int(1), String.self), (.int(0), Bool.self),
        ] {
            let error = try #require(throws: CourierError.self) { _ = try decoder.decode(type, from: value) }
            #expect(error.code == .typeMismatch, "\(value) as \(type)")
        }
        // Arrays of scalars take a fast path; its misses still report the exact element.
        #expect(try decoder.decode([Double].self, from: [1, 2.5]) == [1, 2.5])
        #expect(try decoder.decode([Int].self, from: [1, .double(2)]) == [1, 2])
        let element = try #require(throws: CourierError.self) { try decoder.decode([Int].self, from: [1, .uint(.max)]) }
        #expect(element.code == .valueOutOfRange && element.context.codingPath == [1])
        let error = try #require(throws: CourierError.self) { try decoder.decode(Float.self, from: .double(1e300)) }
        #expect(error.code == .valueOutOfRange)
    }

    @Test func lenientNumbersReadStrings() throws {
        var lenient = ValueDecoder()
        lenient.lenientNumbers = true
        #expect(try lenient.decode(Int.self, from: "42") == 42)
        #expect(try lenient.decode(Double.self, from: "2.5") == 2.5)
        #expect(try lenient.decode(Decimal.self, from: "0.1") == Decimal(string: "0.1"))
        let word = #expect(throws: CourierError.self) { try lenient.decode(Int.self, from: "forty") }
        #expect(word?.code == .typeMismatch)
        let padded = #expect(throws: CourierError.self) { try lenient.decode(Int.self, from: " 42") }
        #expect(padded?.code == .typeMismatch)
    }

    @Test func optionalsEnumsAndNestedCollections() throws {
        let full = Options(
            nickname: "ada", level: .high, roles: [.admin, .member], shape: .circle(radius: 2),
            extra: ["raw": [1, "two"]], nested: [[1, nil], []])
        let value = try roundTrip(full)
        #expect(value["level"] == 9)
        #expect(value["roles"] == ["admin", "member"])
        #expect(value["extra"] == ["raw": [1, "two"]])
        _ = try roundTrip(Options(nickname: nil, level: nil, roles: [], shape: .empty, extra: nil, nested: []))
        _ = try roundTrip(Options(nickname: nil, level: .low, roles: [], shape: .square(1), extra: 1, nested: [[nil]]))

        // Missing and null optionals both decode as nil; an unknown raw value is an error with its path.
        let sparse: Value = ["roles": [], "shape": ["empty": [:]], "nested": [], "nickname": nil]
        let decoded = try decoder.decode(Options.self, from: sparse)
        #expect(decoded.nickname == nil && decoded.level == nil && decoded.shape == .empty)
        let bad: Value = ["roles": ["admin", "owner"], "shape": ["empty": [:]], "nested": []]
        let error = try #require(throws: CourierError.self) { try decoder.decode(Options.self, from: bad) }
        #expect(error.code == .typeMismatch)
        #expect(error.context.codingPath == ["roles", 1])
    }

    @Test func nestedContainersAndSuperCoders() throws {
        let point = Point(x: 3, y: -4, labels: ["a", "b"])
        let value = try roundTrip(point)
        #expect(value == ["position": ["x": 3, "y": -4], "labels": ["a", "b"]])
        #expect(value.objectValue?.keys == ["position", "labels"])

        let dog = Dog(name: "Rex", breed: "collie")
        let encoded = try encoder.encode(dog)
        #expect(encoded == ["breed": "collie", "super": ["name": "Rex"]])
        let decoded = try decoder.decode(Dog.self, from: encoded)
        #expect(decoded.name == "Rex" && decoded.breed == "collie")
    }

    @Test func datesFollowTheStrategy() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(try encoder.encode(date) == "2023-11-14T22:13:20Z")
        #expect(try decoder.decode(Date.self, from: "2023-11-14T22:13:20Z") == date)
        let fractional = Date(timeIntervalSince1970: 1_700_000_000.25)
        let text = try #require(try encoder.encode(fractional).stringValue)
        #expect(text == "2023-11-14T22:13:20.250Z")
        #expect(try decoder.decode(Date.self, from: .string(text)) == fractional)
        // Milliseconds are rounded, not truncated: x.941 s is stored as x.94099… and still writes .941.
        #expect(try encoder.encode(Date(timeIntervalSince1970: 2_658_077_655.941)) == "2054-03-25T18:54:15.941Z")
        #expect(try encoder.encode(Date(timeIntervalSince1970: 1_700_000_000.0004)) == "2023-11-14T22:13:20Z")
        #expect(try encoder.encode(Date(timeIntervalSince1970: 1_700_000_000.9996)) == "2023-11-14T22:13:21Z")
        #expect(try encoder.encode(Date(timeIntervalSince1970: 1_700_000_000.007)) == "2023-11-14T22:13:20.007Z")

        var seconds = ValueEncoder()
        seconds.dateStrategy = .secondsSince1970
        var secondsDecoder = ValueDecoder()
        secondsDecoder.dateStrategy = .secondsSince1970
        #expect(try seconds.encode(date) == .int(1_700_000_000))
        #expect(try secondsDecoder.decode(Date.self, from: 1_700_000_000) == date)

        var millis = ValueEncoder()
        millis.dateStrategy = .millisecondsSince1970
        var millisDecoder = ValueDecoder()
        millisDecoder.dateStrategy = .millisecondsSince1970
        #expect(try millis.encode(fractional) == .int(1_700_000_000_250))
        #expect(try millisDecoder.decode(Date.self, from: 1_700_000_000_250) == fractional)

        let error = try #require(throws: CourierError.self) { try decoder.decode([Date].self, from: ["yesterday"]) }
        #expect(error.code == .typeMismatch && error.context.codingPath == [0])
    }

    /// ISO 8601 text holds the years 0001 to 9999: dates beyond them, infinite or NaN are an encoding error
    /// with their path (Foundation's formatter would write a clamped year), and the years' edges round-trip.
    @Test func datesBeyondISO8601sYearsAreRefused() throws {
        for seconds in [Double.infinity, -.infinity, .nan, 1e300, -1e300, 253_402_300_800, 253_402_300_799.9996,
                        -62_135_769_600.5, -1e15] {
            let error = try #require(throws: CourierError.self, "\(seconds)") {
                try encoder.encode(["at": [Date(timeIntervalSince1970: seconds)]])
            }
            #expect(error.code == .encodingFailed && error.context.codingPath == ["at", 0], "\(seconds)")
        }
        let first = Date(timeIntervalSince1970: -62_135_769_600)
        let last = Date(timeIntervalSince1970: 253_402_300_799.999)
        #expect(try encoder.encode(first) == "0001-01-01T00:00:00Z")
        #expect(try encoder.encode(last) == "9999-12-31T23:59:59.999Z")
        #expect(try decoder.decode(Date.self, from: encoder.encode(first)) == first)
        // The other strategies write numbers; an infinite one is left to the codec (JSON refuses it).
        var seconds = ValueEncoder()
        seconds.dateStrategy = .secondsSince1970
        #expect(try seconds.encode(Date(timeIntervalSince1970: 1e300)) == .double(1e300))
        #expect(throws: CourierError.self) {
            try JSONCodec().encode(seconds.encode(Date(timeIntervalSince1970: .infinity)), hints: CodingHints())
        }
    }

    @Test func dataFollowsTheStrategy() throws {
        let data = Data([0, 1, 2, 250, 255])
        #expect(try encoder.encode(data) == "AAEC+v8=")
        #expect(try decoder.decode(Data.self, from: "AAEC+v8=") == data)
        #expect(try decoder.decode(Data.self, from: .bytes([0, 1, 2, 250, 255])) == data)
        var bytes = ValueEncoder()
        bytes.dataStrategy = .bytes
        #expect(try bytes.encode(data) == .bytes([0, 1, 2, 250, 255]))
        #expect(try decoder.decode([UInt8].self, from: .bytes([7, 8])) == [7, 8])
        let notBase64 = #expect(throws: CourierError.self) { try decoder.decode(Data.self, from: "not base64!") }
        #expect(notBase64?.code == .typeMismatch)
    }

    @Test func dictionariesURLsAndDecimals() throws {
        let scores = ["b": 2, "a": 1]
        let value = try roundTrip(scores)
        #expect(value == ["a": 1, "b": 2])
        _ = try roundTrip([1: "one", 2: "two"])
        #expect(try decoder.decode([String: [Int]].self, from: ["x": [1], "y": []]) == ["x": [1], "y": []])

        let url = URL(string: "https://example.com/a?b=c")!
        #expect(try encoder.encode(url) == "https://example.com/a?b=c")
        #expect(try decoder.decode(URL.self, from: "https://example.com/a?b=c") == url)

        let exact = try #require(Decimal(string: "12345678901234567890.123456789"))
        #expect(try decoder.decode(Decimal.self, from: .number("12345678901234567890.123456789")) == exact)
        #expect(try encoder.encode(exact) == .number("12345678901234567890.123456789"))
        #expect(try encoder.encode(Decimal(42)) == .int(42))
    }

    @Test func keyStrategies() throws {
        struct Account: Codable, Equatable {
            var userID: Int
            var displayName: String
            var isActive: Bool
        }
        var snakeEncoder = ValueEncoder()
        snakeEncoder.keyStrategy = .convertToSnakeCase
        var snakeDecoder = ValueDecoder()
        snakeDecoder.keyStrategy = .convertFromSnakeCase
        let account = Account(userID: 1, displayName: "Ada", isActive: true)
        let value = try snakeEncoder.encode(account)
        #expect(value.objectValue?.keys == ["user_id", "display_name", "is_active"])
        struct Converted: Decodable, Equatable {
            var userId: Int
            var displayName: String
            var isActive: Bool
        }
        #expect(try snakeDecoder.decode(Converted.self, from: value) == Converted(userId: 1, displayName: "Ada", isActive: true))
        let unconverted = #expect(throws: CourierError.self) { try decoder.decode(Converted.self, from: value) }
        #expect(unconverted?.code == .missingValue)
    }

    @Test func userInfoReachesModels() throws {
        struct Tagged: Codable {
            var tag: String
            static let key = CodingUserInfoKey(rawValue: "tag")!
            init(tag: String) { self.tag = tag }
            init(from decoder: any Decoder) throws { tag = decoder.userInfo[Self.key] as? String ?? "none" }
            func encode(to encoder: any Encoder) throws {
                var c = encoder.singleValueContainer()
                try c.encode(encoder.userInfo[Self.key] as? String ?? "none")
            }
        }
        var decoder = ValueDecoder()
        decoder.userInfo[Tagged.key] = "from-decoder"
        #expect(try decoder.decode(Tagged.self, from: .null).tag == "from-decoder")
        var encoder = ValueEncoder()
        encoder.userInfo[Tagged.key] = "from-encoder"
        #expect(try encoder.encode(Tagged(tag: "x")) == "from-encoder")
    }

    @Test func modelErrorsBecomeCourierErrors() throws {
        struct Picky: Codable {
            var n: Int
            init(n: Int) { self.n = n }
            init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: ValueKey.self)
                n = try c.decode(Int.self, forKey: .n)
                guard n > 0 else {
                    throw DecodingError.dataCorruptedError(forKey: .n, in: c, debugDescription: "n must be positive")
                }
            }
            func encode(to encoder: any Encoder) throws {
                throw EncodingError.invalidValue(n, .init(codingPath: encoder.codingPath, debugDescription: "nope"))
            }
            enum ValueKey: String, CodingKey { case n }
        }
        let error = try #require(throws: CourierError.self) { try decoder.decode([Picky].self, from: [["n": 1], ["n": 0]]) }
        #expect(error.code == .typeMismatch)
        #expect(error.context.codingPath == [1, "n"])
        #expect(error.message.contains("n must be positive"))
        let encodeError = try #require(throws: CourierError.self) { try encoder.encode(["p": [Picky(n: 1)]]) }
        #expect(encodeError.code == .encodingFailed)
        #expect(encodeError.context.codingPath == ["p", 0])
    }

    @Test func valueIsCodableWithFoundationCoders() throws {
        let value: Value = ["a": [1, 2.5, "x", true, nil], "b": ["c": .uint(.max)]]
        let data = try JSONEncoder().encode(value)
        let back = try JSONDecoder().decode(Value.self, from: data)
        #expect(back == value)
    }
}
