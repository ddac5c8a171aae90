import Benchmark
import BenchmarkSupport
import Courier
import Foundation

/// JSON: Courier's JSONCodec (to and from `Value`, and the typed codec API) against Foundation's
/// JSONSerialization, JSONDecoder and JSONEncoder on the demo user-list page (users_10.json, users_5000.json),
/// and the peak memory of one typed decode of the 5,000-user page.
struct UserListPage: Codable, Equatable {
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

/// Diagnostic (not in the table): a page of numeric arrays (an embedding of `Float`s, raw bytes, 32-bit ids).
struct VectorPage: Codable, Equatable {
    struct Item: Codable, Equatable {
        var embedding: [Float]
        var bytes: [UInt8]
        var ids: [Int32]
    }

    var items: [Item]

    /// 50 items of 128 floats, 64 bytes and 16 ids, the same on every run.
    static let sample = VectorPage(items: (0..<50).map(item))

    private static func item(_ n: Int) -> Item {
        let embedding: [Float] = (0..<128).map { (k: Int) -> Float in Float((n * 131 + k * 17) % 2000) / 1000 - 1 }
        let bytes: [UInt8] = (0..<64).map { (k: Int) -> UInt8 in UInt8((n * 7 + k * 29) % 256) }
        let ids: [Int32] = (0..<16).map { (k: Int) -> Int32 in Int32(n * 100_000 + k) }
        return Item(embedding: embedding, bytes: bytes, ids: ids)
    }
}

let benchmarks: @Sendable () -> Void = {
    let codec = JSONCodec()
    let hints = CodingHints()

    let vectors = try! JSONEncoder().encode(VectorPage.sample)
    BenchmarkSupport.check(
        try! codec.decode(VectorPage.self, from: vectors, hints: hints, decoder: ValueDecoder()) == VectorPage.sample
            && JSONDecoder().decode(VectorPage.self, from: vectors) == VectorPage.sample,
        "vector page: typed decode vs JSONDecoder")
    Benchmark("json.decode.vectors Courier", configuration: BenchmarkSupport.timed()) { benchmark in
        let decoder = ValueDecoder()
        for _ in benchmark.scaledIterations {
            blackHole(try! codec.decode(VectorPage.self, from: vectors, hints: hints, decoder: decoder))
        }
    }
    Benchmark("json.decode.vectors JSONDecoder", configuration: BenchmarkSupport.timed()) { benchmark in
        let decoder = JSONDecoder()
        for _ in benchmark.scaledIterations { blackHole(try! decoder.decode(VectorPage.self, from: vectors)) }
    }

    for (file, size) in [("users_5000.json", "5000"), ("users_10.json", "10")] {
        let data = BenchmarkSupport.fixture(file)

        // The answers agree before anything is timed.
        let peerModel = try! JSONDecoder().decode(UserListPage.self, from: data)
        let ourModel = try! codec.decode(UserListPage.self, from: data, hints: hints, decoder: ValueDecoder())
        BenchmarkSupport.check(ourModel == peerModel, "\(file): typed decode vs JSONDecoder")
        let ourValue = try! codec.decode(data, hints: hints)
        let peerObject = try! JSONSerialization.jsonObject(with: data) as! NSDictionary
        let ourObject = try! JSONSerialization.jsonObject(with: codec.encode(ourValue, hints: hints)) as! NSDictionary
        BenchmarkSupport.check(ourObject.isEqual(peerObject), "\(file): decode → Value vs JSONSerialization")
        let ourEncoded = try! codec.encode(model: peerModel, hints: hints, encoder: ValueEncoder())
        let peerEncoded = try! JSONEncoder().encode(peerModel)
        BenchmarkSupport.check(
            try! JSONDecoder().decode(UserListPage.self, from: ourEncoded) == peerModel
                && JSONDecoder().decode(UserListPage.self, from: peerEncoded) == peerModel,
            "\(file): typed encode vs JSONEncoder")

        let timed = BenchmarkSupport.timed()

        Benchmark("json.decode.value \(size) Courier", configuration: timed) { benchmark in
            for _ in benchmark.scaledIterations { blackHole(try! codec.decode(data, hints: hints)) }
        }
        Benchmark("json.decode.value \(size) JSONSerialization", configuration: timed) { benchmark in
            for _ in benchmark.scaledIterations { blackHole(try! JSONSerialization.jsonObject(with: data)) }
        }

        Benchmark("json.decode.model \(size) Courier", configuration: timed) { benchmark in
            let decoder = ValueDecoder()
            for _ in benchmark.scaledIterations {
                blackHole(try! codec.decode(UserListPage.self, from: data, hints: hints, decoder: decoder))
            }
        }
        Benchmark("json.decode.model \(size) JSONDecoder", configuration: timed) { benchmark in
            let decoder = JSONDecoder()
            for _ in benchmark.scaledIterations { blackHole(try! decoder.decode(UserListPage.self, from: data)) }
        }

        Benchmark("json.encode.model \(size) Courier", configuration: timed) { benchmark in
            let encoder = ValueEncoder()
            for _ in benchmark.scaledIterations {
                blackHole(try! codec.encode(model: peerModel, hints: hints, encoder: encoder))
            }
        }
        Benchmark("json.encode.model \(size) JSONEncoder", configuration: timed) { benchmark in
            let encoder = JSONEncoder()
            for _ in benchmark.scaledIterations { blackHole(try! encoder.encode(peerModel)) }
        }

        guard size == "5000" else {
            // Diagnostic (not in the table): the fixed cost of one document, on the page's empty envelope.
            let envelope = Data(#"{"code":200,"message":"OK","data":{"page":1,"total":0,"users":[]}}"#.utf8)
            Benchmark("json.decode.value envelope Courier", configuration: timed) { benchmark in
                for _ in benchmark.scaledIterations { blackHole(try! codec.decode(envelope, hints: hints)) }
            }
            Benchmark("json.decode.value envelope JSONSerialization", configuration: timed) { benchmark in
                for _ in benchmark.scaledIterations { blackHole(try! JSONSerialization.jsonObject(with: envelope)) }
            }
            continue
        }
        // Peak memory of one typed decode: how far the process's peak resident size rises above what it holds.
        Benchmark("memory.decode.model \(size) Courier", configuration: BenchmarkSupport.memory()) { benchmark in
            BenchmarkSupport.measurePeakMemory(benchmark) {
                blackHole(try! codec.decode(UserListPage.self, from: data, hints: hints, decoder: ValueDecoder()))
            }
        }
        Benchmark("memory.decode.model \(size) JSONDecoder", configuration: BenchmarkSupport.memory()) { benchmark in
            BenchmarkSupport.measurePeakMemory(benchmark) {
                blackHole(try! JSONDecoder().decode(UserListPage.self, from: data))
            }
        }
    }
}
