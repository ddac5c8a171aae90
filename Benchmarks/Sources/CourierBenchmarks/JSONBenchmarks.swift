import Courier
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// JSON: Courier's JSONCodec and Codable bridge against Foundation's JSONSerialization, JSONDecoder and
/// JSONEncoder on the demo user-list page (users_10.json and users_5000.json).
enum JSONBenchmarks {
    /// The Codable model of the user-list page, shared by both sides.
    struct UserListPage: Codable {
        struct Address: Codable {
            var city: String
            var street: String
            var zip: String
        }

        struct User: Codable {
            var id: Int64
            var name: String
            var email: String
            var age: Int
            var score: Double
            var active: Bool
            var tags: [String]
            var address: Address
        }

        struct Payload: Codable {
            var page: Int
            var total: Int
            var users: [User]
        }

        var code: Int
        var message: String
        var data: Payload
    }

    static func run(_ h: inout Harness) throws {
        let codec = JSONCodec()
        let valueDecoder = ValueDecoder()
        let valueEncoder = ValueEncoder()
        let jsonDecoder = JSONDecoder()
        let jsonEncoder = JSONEncoder()

        for name in ["users_10.json", "users_5000.json"] {
            let data = fixture(name)
            print("-- \(name) (\(data.count) bytes)")

            let raw = try h.measure("Courier JSONCodec.decode → Value", bytes: data.count) {
                _ = try codec.decode(data, hints: CodingHints())
            }
            let rawPeer = try h.measure("Foundation JSONSerialization.jsonObject", bytes: data.count) {
                _ = try JSONSerialization.jsonObject(with: data)
            }
            h.compare(raw, rawPeer, target: 5)

            let typed = try h.measure("Courier JSONCodec + ValueDecoder → model", bytes: data.count) {
                _ = try valueDecoder.decode(UserListPage.self, from: codec.decode(data, hints: CodingHints()))
            }
            let typedPeer = try h.measure("Foundation JSONDecoder → model", bytes: data.count) {
                _ = try jsonDecoder.decode(UserListPage.self, from: data)
            }
            h.compare(typed, typedPeer, target: 2)

            let page = try jsonDecoder.decode(UserListPage.self, from: data)
            let outputSize = (try codec.encode(valueEncoder.encode(page)) as [UInt8]).count
            let encode = try h.measure("Courier ValueEncoder + JSONCodec.encode", bytes: outputSize) {
                _ = try codec.encode(valueEncoder.encode(page)) as [UInt8]
            }
            let encodePeer = try h.measure("Foundation JSONEncoder", bytes: outputSize) {
                _ = try jsonEncoder.encode(page)
            }
            h.compare(encode, encodePeer, target: 2)

            if name == "users_5000.json" {
                print("  peak memory of one operation (VmHWM growth over the resident baseline):")
                try memory("Courier decode → Value") { _ = try codec.decode(data, hints: CodingHints()) }
                try memory("JSONSerialization.jsonObject") { _ = try JSONSerialization.jsonObject(with: data) }
                try memory("Courier decode → model") {
                    _ = try valueDecoder.decode(UserListPage.self, from: codec.decode(data, hints: CodingHints()))
                }
                try memory("JSONDecoder → model") { _ = try jsonDecoder.decode(UserListPage.self, from: data) }
                try memory("Courier encode") { _ = try codec.encode(valueEncoder.encode(page)) as [UInt8] }
                try memory("JSONEncoder") { _ = try jsonEncoder.encode(page) }
            }
        }
        print(String(format: "  process peak memory: %.1f MiB", peakMemoryMiB()))
    }

    /// Resets the kernel's peak-RSS mark (Linux: `5` into /proc/self/clear_refs), runs `body` once and
    /// prints how far the peak rose above the resident size before it.
    private static func memory(_ name: String, _ body: () throws -> Void) rethrows {
        guard FileManager.default.isWritableFile(atPath: "/proc/self/clear_refs") else { return }
        #if canImport(Glibc)
        // Hand freed heap back to the system (glibc's malloc_trim, not exported by the Glibc module) so the
        // baseline is what is really in use.
        if let symbol = dlsym(nil, "malloc_trim") {
            _ = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)(0)
        }
        #endif
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        let before = residentMiB()
        try body()
        let peak = peakMemoryMiB()
        print(String(format: "    %-40@ +%7.1f MiB", name as NSString, max(0, peak - before)))
    }

    private static func residentMiB() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return (line.split(separator: " ").compactMap { Double($0) }.first ?? 0) / 1024
        }
        return 0
    }
}
