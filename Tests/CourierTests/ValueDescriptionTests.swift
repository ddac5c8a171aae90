import Courier
import Foundation
import Testing

/// `print(value)` shows compact JSON; `debugDescription` names the cases.
@Suite struct ValueDescriptionTests {
    @Test func descriptionIsCompactJSONInMemberOrder() {
        let user: Value = ["id": 7, "name": "Ada \"the first\"", "tags": ["admin", nil, true], "score": 99.5]
        #expect(user.description == #"{"id":7,"name":"Ada \"the first\"","tags":["admin",null,true],"score":99.5}"#)
        #expect("\(user["id"]!)" == "7")
        #expect(String(describing: Value.string("a\nb")) == #""a\nb""#)
        #expect(Value.object([:]).description == "{}")
        #expect(Value.array([]).description == "[]")
    }

    @Test func everyCaseHasAReadableForm() {
        #expect(Value.null.description == "null")
        #expect(Value.uint(UInt64.max).description == "18446744073709551615")
        #expect(Value.int(-3).description == "-3")
        #expect(Value.number("123456789012345678901234567890").description == "123456789012345678901234567890")
        #expect(Value.bytes([0xDE, 0xAD, 0xBE, 0xEF]).description == #""3q2+7w==""#)
        #expect(Value.string("\u{1}").description == #""\u0001""#)
    }

    /// What JSON cannot hold still prints (the codec refuses it; printing never fails or traps).
    @Test func whatJSONCannotHoldStillPrints() throws {
        #expect(Value.array([.double(.nan), .double(.infinity), .double(-.infinity)]).description == "[NaN,Infinity,-Infinity]")
        #expect(Value.number("not a number").description == #""not a number""#)
        var deep = Value.null
        for _ in 0..<300 { deep = .array([deep]) }
        #expect(deep.description == String(repeating: "[", count: 128) + "[…]" + String(repeating: "]", count: 128))
        #expect(deep.debugDescription.hasSuffix("array(…)" + String(repeating: "])", count: 128)))
        let refused = try #require(throws: CourierError.self) { try JSONCodec().encode(Value.double(.nan), hints: CodingHints()) }
        #expect(refused.code == .encodingFailed)
    }

    @Test func debugDescriptionNamesTheCases() {
        let value: Value = ["id": .int(7), "big": .uint(UInt64.max), "avatar": .bytes([1, 2, 3]), "ok": true,
                            "n": .number("1e400"), "list": [.double(1.5), .null]]
        #expect(value.debugDescription == #"object({"id": int(7), "big": uint(18446744073709551615), "avatar": bytes(3), "#
            + #""ok": bool(true), "n": number("1e400"), "list": array([double(1.5), null])})"#)
        #expect(String(reflecting: Value.string("a\"b")) == #"string("a\"b")"#)
    }
}
