import Foundation
import Testing

@testable import Courier

/// The typed JSON decoder's fallbacks to ``ValueDecoding`` (a `Date` or `Decimal`, a number that is not an
/// exact integer, a read of the wrong type; a `Float` too, before it had a direct read) cost one step each,
/// whatever the depth: they used to rebuild a decoder per level of the path for every such read (200,000
/// floats 500 levels down: 10 s), and a scalar read tried on a container parsed the whole container again.
@Suite struct JSONTypedFallbackTests {
    /// A recursive model whose innermost level holds the values read through the fallback.
    final class Chain: Decodable, Equatable {
        var next: Chain?
        var floats: [Float]?
        var dates: [Date]?
        var decimals: [Decimal]?
        var bytes: [Int8]?

        static func == (a: Chain, b: Chain) -> Bool {
            a.next == b.next && a.floats == b.floats && a.dates == b.dates && a.decimals == b.decimals
                && a.bytes == b.bytes
        }
    }

    /// Reads a scalar first, then a container, as "any JSON" models do (each failed try is an error).
    enum Probing: Decodable, Equatable {
        case number(Double), text(String), list([Probing]), map([String: Probing]), null

        init(from decoder: any Decoder) throws {
            let single = try decoder.singleValueContainer()
            if single.decodeNil() {
                self = .null
            } else if let number = try? single.decode(Double.self) {
                self = .number(number)
            } else if let text = try? single.decode(String.self) {
                self = .text(text)
            } else if let list = try? single.decode([Probing].self) {
                self = .list(list)
            } else {
                self = .map(try single.decode([String: Probing].self))
            }
        }
    }

    /// What a model learns about the decoder it is given.
    struct Witness: Decodable {
        var reusesItsNode = false
        var linksToItsParent = false
        var depth = 0
        var inner: [Witness] = []

        enum CodingKeys: String, CodingKey { case inner }

        init(from decoder: any Decoder) throws {
            if let typed = decoder as? JSONTypedDecoding {
                reusesItsNode = typed.valueDecoding(.null) === typed.valueDecoding(.null)
                linksToItsParent = typed.bridge().parent === typed.parent?.bridge()
                var node: ValueDecoding? = typed.bridge()
                while let current = node {
                    depth += 1
                    node = current.parent
                }
            }
            let container = try decoder.container(keyedBy: CodingKeys.self)
            inner = try container.decodeIfPresent([Witness].self, forKey: .inner) ?? []
        }
    }

    static func nested(_ depth: Int, around leaf: String) -> Data {
        Data((String(repeating: #"{"next":"#, count: depth) + leaf + String(repeating: "}", count: depth)).utf8)
    }

    static func typed<T: Decodable>(_ type: T.Type, _ data: Data) throws -> T {
        try JSONCodec().decode(T.self, from: data, hints: CodingHints(), decoder: ValueDecoder())
    }

    static func failure(_ body: () throws -> Void) -> CourierError? {
        do {
            try body()
            return nil
        } catch {
            return error as? CourierError
        }
    }

    static func pivot<T: Decodable>(_ type: T.Type, _ data: Data) throws -> T {
        try ValueDecoder().decode(T.self, from: JSONCodec().decode(data, hints: CodingHints()))
    }

    /// Each decoder's fallback node is built once and linked to its parent's, so the path is never walked per
    /// read.
    @Test func theFallbackNodeIsBuiltOncePerDecoder() throws {
        let witness = try Self.typed(Witness.self, Data(#"{"inner":[{"inner":[{}]}]}"#.utf8))
        let deepest = try #require(witness.inner.first?.inner.first)
        for level in [witness, witness.inner[0], deepest] {
            #expect(level.reusesItsNode)
            #expect(level.linksToItsParent)
        }
        // The root, "inner", [0], "inner", [0]: one node per decoder on the way.
        #expect(deepest.depth == 5)
    }

    @Test func deepFallbackReadsDecodeAsTheValuePathDoes() throws {
        let floats = "[" + (0..<20_000).map { "\(Double($0) + 0.5)" }.joined(separator: ",") + "]"
        let dates = "[" + Array(repeating: #""2024-05-06T07:08:09Z""#, count: 2_000).joined(separator: ",") + "]"
        let decimals = "[" + Array(repeating: "1.25", count: 2_000).joined(separator: ",") + "]"
        let bytes = "[" + Array(repeating: "1.0", count: 2_000).joined(separator: ",") + "]"
        let leaf = #"{"floats":\#(floats),"dates":\#(dates),"decimals":\#(decimals),"bytes":\#(bytes)}"#
        let data = Self.nested(500, around: leaf)
        let typed = try Self.typed(Chain.self, data)
        #expect(typed == (try Self.pivot(Chain.self, data)))
        var innermost = typed
        while let next = innermost.next { innermost = next }
        #expect(innermost.floats?.count == 20_000 && innermost.bytes?.first == 1)
    }

    /// A failed read deep down names the same path on both ways.
    @Test func deepFallbackErrorsNameTheWholePath() throws {
        let data = Self.nested(300, around: #"{"floats":[1.5,"x"]}"#)
        let typed = try #require(Self.failure { _ = try Self.typed(Chain.self, data) })
        let pivot = try #require(Self.failure { _ = try Self.pivot(Chain.self, data) })
        #expect(typed.code == .typeMismatch)
        #expect(typed.context.codingPath == pivot.context.codingPath)
        #expect(typed.context.codingPath.count == 302)
        #expect(typed.message == pivot.message)
    }

    /// A model that records the failures of its tries, as they reach it.
    struct Recorder: Decodable {
        var failures: [CourierError] = []

        init(from decoder: any Decoder) throws {
            let single = try decoder.singleValueContainer()
            for attempt in [{ _ = try single.decode(Bool.self) }, { _ = try single.decode(Int8.self) }] {
                do {
                    try attempt()
                } catch let error as CourierError {
                    failures.append(error)
                }
            }
        }
    }

    /// A failed try's error spells out its path and detail only when they are read (a model trying one type
    /// after another at every level of a deep value used to pay for the whole path per try, on both paths);
    /// read, they are what they always were, and an error that leaves a decode holds nothing of it.
    @Test(arguments: [false, true])
    func failedTriesAreSpelledOutWhenRead(typed: Bool) throws {
        let data = Data(#"{"a":[[1000]]}"#.utf8)
        let decoded = try typed ? Self.typed([String: [[Recorder]]].self, data) : Self.pivot([String: [[Recorder]]].self, data)
        let failures = try #require(decoded["a"]?.first?.first?.failures)
        #expect(failures.count == 2)
        #expect(failures.allSatisfy { $0.isDeferred })
        #expect(failures.map(\.code) == [.typeMismatch, .valueOutOfRange])
        #expect(failures[0].context.codingPath == [.key("a"), .index(0), .index(0)])
        #expect(failures[0].detail == "Expected a boolean at a[0][0], found integer.")
        #expect(failures[1].detail == "1000 does not fit Int8 at a[0][0].")
        #expect(failures[1].resolved().detail == failures[1].detail)
        #expect(!failures[1].resolved().isDeferred)
        #expect(failures[1].resolved().context == failures[1].context)

        let escaped = try #require(Self.failure {
            _ = try typed ? Self.typed([String: [[Int8]]].self, data) : Self.pivot([String: [[Int8]]].self, data)
        })
        #expect(!escaped.isDeferred)
        #expect(escaped.detail == "1000 does not fit Int8 at a[0][0].")
    }

    /// A model that tries scalars before containers, at every level of a deep document, decodes as the Value
    /// path does; and a container read of the wrong kind fails with the Value path's error.
    @Test func scalarTriesOnContainersDecodeAsTheValuePathDoes() throws {
        let chain = String(repeating: "[", count: 400) + #"{"a":"b","c":[1,null]}"# + String(repeating: "]", count: 400)
        let data = Data(("[" + Array(repeating: chain, count: 4).joined(separator: ",") + "]").utf8)
        #expect(try Self.typed(Probing.self, data) == Self.pivot(Probing.self, data))
        for (json, type) in [("[[1]]", "object"), (#"{"a":{}}"#, "array")] {
            let document = Data(json.utf8)
            let typed: CourierError
            let pivot: CourierError
            if type == "object" {
                typed = try #require(Self.failure { _ = try Self.typed([[String: Int]].self, document) })
                pivot = try #require(Self.failure { _ = try Self.pivot([[String: Int]].self, document) })
            } else {
                typed = try #require(Self.failure { _ = try Self.typed([String: [Int]].self, document) })
                pivot = try #require(Self.failure { _ = try Self.pivot([String: [Int]].self, document) })
            }
            #expect(typed.message == pivot.message)
            #expect(typed.context.codingPath == pivot.context.codingPath)
        }
    }
}
