import Courier
import CourierTestSupport
import Foundation
import Testing

@Suite struct JSONCodecTests {
    let codec = JSONCodec()

    func decode(_ text: String, _ options: JSONCodec.Options = JSONCodec.Options()) throws -> Value {
        try JSONCodec(options: options).decode(Array(text.utf8))
    }

    func encode(_ value: Value, _ options: JSONCodec.Options = JSONCodec.Options()) throws -> String {
        try JSONCodec(options: options).encodeString(value)
    }

    func failure(_ text: String, _ options: JSONCodec.Options = JSONCodec.Options()) throws -> CourierError {
        try #require(throws: CourierError.self) { try decode(text, options) }
    }

    // MARK: Structure and scalars

    @Test func decodesAllKinds() throws {
        let value = try decode(#" {"a": [1, -2.5, true, false, null, "x\n\u00e9\ud83d\ude00"], "b": {}} "#)
        #expect(value == ["a": [1, -2.5, true, false, nil, "x\né😀"], "b": [:]])
        #expect(value["a"]?[1] == .double(-2.5))
    }

    @Test func entryPointsAgree() throws {
        let text = #"{"id":7,"tags":["a","b"]}"#
        let bytes = Array(text.utf8)
        let fromArray = try codec.decode(bytes)
        let fromData = try codec.decode(Data(bytes), hints: CodingHints())
        let fromBuffer = try bytes.withUnsafeBytes { try codec.decode($0) }
        let fromSlice = try codec.decode(bytes[...].dropFirst(0))
        #expect(fromArray == fromData && fromData == fromBuffer && fromBuffer == fromSlice)
        #expect(try codec.encode(fromArray) as [UInt8] == bytes)
        #expect(try codec.encode(fromArray, hints: CodingHints()) == Data(bytes))
    }

    @Test func shortStringsAreExactWhateverTheirLength() throws {
        // Strings up to 15 bytes come from a small cache keyed by their bytes: near-identical ones must
        // never be confused, in names or values, and empty strings must work too.
        var strings: [String] = [""]
        for length in 1...17 {
            let base = String(repeating: "k", count: length)
            strings.append(base)
            strings.append(String(base.dropLast()) + "l")
            strings.append(String(base.dropLast()) + "é")
        }
        strings += (0..<300).map { "v\($0)" } + ["中文", "😀", "\u{0}"]
        var object = Value.Object()
        for (i, string) in strings.enumerated() { object[string] = .string(strings[strings.count - 1 - i]) }
        let value: Value = [.array(strings.map { .string($0) }), .object(object), .array(strings.map { .string($0) })]
        let decoded = try codec.decode(codec.encode(value) as [UInt8])
        #expect(decoded == value)
        #expect(decoded[0]?.arrayValue?.compactMap(\.stringValue) == strings)
        #expect(decoded[1]?.objectValue?.keys == strings)
    }

    // MARK: Numbers

    @Test(arguments: [
        ("0", Value.int(0)), ("-0", .int(0)), ("9223372036854775807", .int(.max)),
        ("-9223372036854775808", .int(.min)), ("9223372036854775808", .uint(9_223_372_036_854_775_808)),
        ("18446744073709551615", .uint(.max)), ("18446744073709551616", .number("18446744073709551616")),
        ("-9223372036854775809", .number("-9223372036854775809")),
        ("123456789012345678901234567890", .number("123456789012345678901234567890")),
        ("0.1", .double(0.1)), ("808.78", .double(808.78)), ("1e2", .double(100)), ("-0.0", .double(-0.0)),
        ("0.30000000000000004", .double(0.30000000000000004)), ("1.7976931348623157e308", .double(.greatestFiniteMagnitude)),
        ("0.1000000000000000055511151231257827", .number("0.1000000000000000055511151231257827")),
        ("3.14159265358979323846264338327950288", .number("3.14159265358979323846264338327950288")),
        ("1e999999", .number("1e999999")), ("-1E-999999999999999999999", .number("-1E-999999999999999999999")),
        ("5e-324", .double(.leastNonzeroMagnitude)), ("2e-400", .number("2e-400")),
        // Found by the random round trip: an integral double whose shortest form is not its exact integer.
        ("-1.3741123748111461e+17", .double(-1.3741123748111461e+17)),
    ])
    func numbersKeepExactness(text: String, expected: Value) throws {
        let value = try decode(text)
        // Compare the case too, not only the mathematical value.
        #expect(String(describing: value) == String(describing: expected))
    }

    @Test func exactNumbersAreWrittenVerbatim() throws {
        let text = #"[18446744073709551616,123456789012345678901234567890,0.1000000000000000055511151231257827,1e999999,18446744073709551615,-9223372036854775808]"#
        #expect(try encode(decode(text)) == text)
    }

    @Test func doublesUseShortestRoundTripForm() throws {
        #expect(try encode([.double(1), .double(0.1), .double(684), .double(-0.0), .double(1e-7), .double(2.5e20)])
            == "[1.0,0.1,684.0,-0.0,1e-07,2.5e+20]")
        let reparsed = try decode("[1e-07,2.5e+20]")
        #expect(reparsed == [.double(1e-7), .double(2.5e20)])
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity])
    func nonFiniteDoublesCannotBeEncoded(_ d: Double) throws {
        let error = try #require(throws: CourierError.self) { try encode(["x": [.double(d)]]) }
        #expect(error.code == .encodingFailed)
        #expect(error.context.codingPath == ["x", 0])
    }

    @Test func exponentsBeyondAnyIntegerRoundTrip() throws {
        // Found by FuzzJSON: comparing these numbers once overflowed while reading the exponent.
        let text = "[5e-9223372036854775808,184e-9223372036854775809,1e99999999999999999999,-0.0]"
        let value = try codec.decode(Array(text.utf8))
        let encoded: [UInt8] = try codec.encode(value)
        #expect(String(decoding: encoded, as: UTF8.self) == text)
        #expect(try codec.decode(encoded) == value)
        #expect(value[0] != value[1])
    }

    @Test func invalidExactNumbersCannotBeEncoded() throws {
        let error = try #require(throws: CourierError.self) { try encode(.number("12abc")) }
        #expect(error.code == .encodingFailed)
    }

    // MARK: Strictness

    @Test(arguments: [
        ("[1,]", 1, 4), ("{\"a\":1,}", 1, 8), ("[01]", 1, 3), ("[NaN]", 1, 2), ("[Infinity]", 1, 2),
        ("[-Infinity]", 1, 3), ("[\"a\tb\"]", 1, 4), ("{\n  \"a\": 1,\n  \"b\": tru\n}", 3, 8),
        ("[1 2]", 1, 4), ("{\"a\" 1}", 1, 6), ("{'a':1}", 1, 2), ("[1.]", 1, 4), ("[.5]", 1, 2), ("[1e]", 1, 4),
        ("[\"\\x\"]", 1, 4), ("", 1, 1), ("   ", 1, 4), ("[] []", 1, 4), ("\"abc", 1, 5), ("[1,\n\n  ", 3, 3),
    ])
    func rejectsWithLineAndColumn(text: String, line: Int, column: Int) throws {
        let error = try failure(text)
        #expect(error.code == .malformedInput, "\(error)")
        #expect(error.context.line == line, "\(error)")
        #expect(error.context.column == column, "\(error)")
        #expect(error.message.contains("line \(line), column \(column)"))
    }

    @Test(arguments: [
        [0x22, 0xFF, 0x22], [0x22, 0xC0, 0x80, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],
        [0x22, 0xE2, 0x82, 0x22], [0x22, 0x61, 0x80, 0x22], [0x22, 0xF0, 0x9F, 0x98, 0x22],
    ] as [[UInt8]])
    func rejectsInvalidUTF8(bytes: [UInt8]) throws {
        let error = try #require(throws: CourierError.self) { try codec.decode(bytes) }
        #expect(error.code == .invalidUTF8)
        #expect(error.context.line == 1)
        #expect(error.context.column != nil)
    }

    @Test func invalidUTF8AfterEscapesIsRejected() throws {
        let bytes: [UInt8] = Array(#"["\n"#.utf8) + [0xFF] + Array(#""]"#.utf8)
        let error = try #require(throws: CourierError.self) { try codec.decode(bytes) }
        #expect(error.code == .invalidUTF8)
        #expect(error.context.column == 5)
    }

    @Test(arguments: [#"["\uD800"]"#, #"["\uDC00"]"#, #"["\uD800\u0041"]"#, #"["\uD800\n"]"#, #"["\uDBFF\uDBFF"]"#])
    func rejectsLoneSurrogates(text: String) throws {
        let error = try failure(text)
        #expect(error.code == .malformedInput)
        #expect(error.context.column == 3)
    }

    @Test func byteOrderMarkIsRejectedUnlessAllowed() throws {
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("[1]".utf8)
        let error = try #require(throws: CourierError.self) { try codec.decode(bytes) }
        #expect(error.code == .malformedInput)
        var options = JSONCodec.Options()
        options.allowsByteOrderMark = true
        #expect(try JSONCodec(options: options).decode(bytes) == [1])
    }

    @Test func inputSizeIsBounded() throws {
        var options = JSONCodec.Options()
        options.maximumInputSize = 10
        let error = try failure("[1,2,3,4,5,6]", options)
        #expect(error.code == .sizeLimitExceeded)
        #expect(try decode("[1,2,3,4]", options) == [1, 2, 3, 4])
    }

    // MARK: Depth

    @Test func hostileNestingFailsQuicklyWithDepthError() throws {
        for open in ["[", "{\"a\":"] {
            let text = String(repeating: open, count: 100_000)
            let error = try failure(text)
            #expect(error.code == .depthLimitExceeded)
            #expect(error.context.column == (open == "[" ? 513 : 513 * 5 - 4))
        }
    }

    @Test func depthLimitIsExact() throws {
        let ok = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(try decode(ok).arrayValue != nil)
        let tooDeep = "[" + ok + "]"
        #expect(try failure(tooDeep).code == .depthLimitExceeded)
        var options = JSONCodec.Options()
        options.maximumDepth = 3
        #expect(try decode("[[[1]]]", options) == [[[1]]])
        #expect(try failure("[[[[1]]]]", options).code == .depthLimitExceeded)
        #expect(try failure("[[[{}]]]", options).code == .depthLimitExceeded)
        // The writer honours the limit too.
        let error = try #require(throws: CourierError.self) { try encode([[[[1]]]], options) }
        #expect(error.code == .depthLimitExceeded)
    }

    // MARK: Duplicate keys

    @Test func duplicateKeysLastWinsByDefaultKeepingFirstPosition() throws {
        let value = try decode(#"{"a":1,"b":2,"a":3}"#)
        #expect(value.objectValue?.keys == ["a", "b"])
        #expect(value["a"] == 3)
        #expect(try encode(value) == #"{"a":3,"b":2}"#)
    }

    @Test func duplicateKeysFirstWins() throws {
        var options = JSONCodec.Options()
        options.duplicateKeys = .firstWins
        let value = try decode(#"{"a":1,"b":2,"a":3}"#, options)
        #expect(value["a"] == 1)
        #expect(value.objectValue?.count == 2)
    }

    @Test func duplicateKeysRejected() throws {
        var options = JSONCodec.Options()
        options.duplicateKeys = .reject
        let error = try failure("{\"a\":1,\n \"a\":3}", options)
        #expect(error.code == .malformedInput)
        #expect(error.context.line == 2 && error.context.column == 2)
        #expect(error.message.contains("\"a\" appears twice"))
        // Large objects (hash-indexed) detect duplicates too.
        let members = (0..<40).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        #expect(try failure("{\(members),\"k7\":0}", options).code == .malformedInput)
        #expect(try decode("{\(members),\"k7\":0}")["k7"] == 0)
        // Escaped spellings of the same name are the same name.
        let escaped = try failure(#"{"a":1,"\u0061":2}"#, options)
        #expect(escaped.code == .malformedInput && escaped.context.column == 8)
        #expect(try decode(#"{"a":1,"\u0061":2}"#) == ["a": 2])
    }

    // MARK: Output

    @Test func prettyAndSortedOutput() throws {
        let value: Value = ["b": [1, 2], "a": ["y": nil, "x": [:]], "c": []]
        var options = JSONCodec.Options()
        options.pretty = true
        options.sortedKeys = true
        let expected = """
            {
              "a": {
                "x": {},
                "y": null
              },
              "b": [
                1,
                2
              ],
              "c": []
            }
            """
        #expect(try encode(value, options) == expected)
        #expect(try encode(value) == #"{"b":[1,2],"a":{"y":null,"x":{}},"c":[]}"#)
    }

    @Test func stringEscaping() throws {
        let value: Value = .string("q\"b\\s/\n\r\t\u{8}\u{C}\u{1}\u{1F}é😀\u{7F}")
        #expect(try encode(value) == #""q\"b\\s/\n\r\t\b\f\u0001\u001fé😀\#u{7F}""#)
        var options = JSONCodec.Options()
        options.escapeSlashes = true
        #expect(try encode("a/b", options) == #""a\/b""#)
        #expect(try decode(encode(value)) == value)
    }

    /// The writer finds plain strings eight bytes at a time and pads the last few: every length around those
    /// boundaries, with each kind of byte at every position, is written as a byte-by-byte escaper writes it.
    @Test(arguments: [false, true])
    func stringEscapingAtEveryPositionAndLength(escapeSlashes: Bool) throws {
        func reference(_ text: String) -> String {
            var out = "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "/" where escapeSlashes: out += "\\/"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                case "\u{8}": out += "\\b"
                case "\u{C}": out += "\\f"
                case "\u{0}"..."\u{1F}":
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out + "\""
        }
        var options = JSONCodec.Options()
        options.escapeSlashes = escapeSlashes
        let specials: [String] = ["\"", "\\", "/", "\n", "\u{0}", "\u{1F}", " ", "~", "\u{7F}", "é", "😀"]
        for length in 0...26 {
            let plain = String(repeating: "a", count: length)
            #expect(try encode(.string(plain), options) == reference(plain))
            for position in 0..<max(length, 1) {
                for special in specials {
                    var characters = Array(plain)
                    if position < characters.count { characters[position] = Character(special) } else { characters.append(Character(special)) }
                    let text = String(characters)
                    #expect(try encode(.string(text), options) == reference(text), "\(text.debugDescription)")
                    #expect(try encode(["k": .string(text)], options) == "{\"k\":\(reference(text))}")
                }
            }
        }
    }

    @Test func integersAreWrittenInDecimal() throws {
        var values: [Int64] = [0, 1, 9, 10, 99, 100, .max, .min, .max - 1, .min + 1]
        var power: Int64 = 1
        for _ in 0..<18 {
            power *= 10
            values += [power - 1, power, power + 1, -power + 1, -power, -power - 1]
        }
        for v in values { #expect(try encode(.int(v)) == String(v)) }
        for v: UInt64 in [.max, .max - 1, UInt64(Int64.max) + 1, 10_000_000_000_000_000_000, 9_999_999_999_999_999_999] {
            #expect(try encode(.uint(v)) == String(v))
        }
    }

    @Test func bytesAreBase64() throws {
        #expect(try encode([.bytes([]), .bytes([0x66]), .bytes([0x66, 0x6F]), .bytes(Array("foobar".utf8))])
            == #"["","Zg==","Zm8=","Zm9vYmFy"]"#)
    }

    @Test func fixtureRoundTripsByteForByte() throws {
        let data = try Repository.fixture("users_10.json")
        var bytes = [UInt8](data)
        while let last = bytes.last, last == 0x0A || last == 0x20 { bytes.removeLast() }
        let value = try codec.decode(bytes)
        let encoded: [UInt8] = try codec.encode(value)
        #expect(encoded == bytes)
        #expect(value["data"]?["users"]?[0]?["name"] == "Zoë Hernández")
    }

    @Test func largeFixtureRoundTrips() throws {
        let data = try Repository.fixture("users_5000.json")
        let value = try codec.decode(data, hints: CodingHints())
        #expect(value["data"]?["users"]?.arrayValue?.count == 5000)
        #expect(try codec.decode(codec.encode(value) as [UInt8]) == value)
    }
}
