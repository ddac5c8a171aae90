import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// Lengths a caller or a server states are claims, not facts: absurd ones give an unknown length, an error or
/// a smaller reservation, never an overflow.
@Suite struct BodyStreamLengthTests {
    static func chunks(_ parts: [Data]) -> AsyncStream<Data> {
        AsyncStream { continuation in
            for part in parts { continuation.yield(part) }
            continuation.finish()
        }
    }

    @Test func lengthsPastInt64AreUnknown() {
        let huge = BodyStream(Self.chunks([]), length: .max)
        #expect(BodyStream.concatenation([huge, .data(Data([1]))]).length == nil)
        #expect(BodyStream.concatenation([.data(Data([1, 2])), .data(Data([3]))]).length == 3)
        #expect(BodyStream(Self.chunks([]), length: -5).length == nil)
    }

    /// A one-shot body declaring `Int64.max` bytes is read for what it holds (the reservation is bounded),
    /// and one declaring more than the limit is refused before it is read.
    @Test func aLyingDeclaredLengthIsNotReservedWhole() async throws {
        let liar = BodyStream(Self.chunks([Data("abc".utf8), Data("de".utf8)]), length: .max)
        #expect(try await liar.collect(upTo: .max) == Data("abcde".utf8))
        let refused = BodyStream(Self.chunks([Data("abc".utf8)]), length: 10)
        let error = await #expect(throws: CourierError.self) { try await refused.collect(upTo: 5) }
        #expect(error?.code == .sizeLimitExceeded)
    }

    /// Resuming a download: a 206 whose `Content-Length` would take the total past `Int64.max` leaves the total
    /// unknown instead of overflowing, and the bytes are appended.
    @Test func aResumedDownloadWithAnOverflowingLengthCompletes() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("file.bin")
        try Data("abc".utf8).write(to: folder.appendingPathComponent("file.bin.part"))
        try Data("\"v1\"".utf8).write(to: folder.appendingPathComponent("file.bin.part.resume"))
        let transport = InMemoryTransport { request, _ in
            #expect(request.headerFields[.range] == "bytes=3-")
            var fields = HTTPFields()
            fields[.contentRange] = "bytes 3-5/*"
            fields[.contentLength] = String(Int64.max)
            fields[.eTag] = "\"v1\""
            return (HTTPResponse(status: .partialContent, headerFields: fields), Data("def".utf8))
        }
        let client = CourierClient(transport: transport)
        let file = try await client.download(Fixture.endpoint("/file"), to: destination).reply
        #expect(file.value.resumedBytes == 3)
        #expect(try Data(contentsOf: destination) == Data("abcdef".utf8))
    }

    /// Streams `chunks` × `size` bytes with an entity tag and no `Content-Length`: only counting finds the size.
    struct UndeclaredLengthTransport: Transport {
        var chunks: Int
        var size: Int
        func send(_ request: HTTPRequest, body: Data?, options: TransportOptions) async throws -> (HTTPResponse, Data) {
            (HTTPResponse(status: .ok), Data(repeating: 7, count: chunks * size))
        }
        func stream(
            _ request: HTTPRequest, body: BodyStream?, options: TransportOptions, into sink: any ResponseBodySink
        ) async throws -> HTTPResponse {
            let head = HTTPResponse(status: .ok, headerFields: [.eTag: "\"v1\"", .contentType: "application/octet-stream"])
            try sink.begin(head)
            for _ in 0..<chunks { try sink.write(Data(repeating: 7, count: size)) }
            return head
        }
    }

    /// A download that passes its `maximumSize` while it is counted (no length declared) is discarded, as one
    /// declared too large is: no partial file or resume record is left to resume past the limit.
    @Test func aDownloadCountedPastItsMaximumIsDiscarded() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("file.bin")
        let client = CourierClient(transport: UndeclaredLengthTransport(chunks: 10, size: 1_000))
        for _ in 0..<2 {
            let error = try await #require(throws: CourierError.self) {
                try await client.download(Fixture.endpoint("/file"), to: destination, maximumSize: 3_000).reply
            }
            #expect(error.code == .responseTooLarge)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
        }
        // Within the limit, the same download completes.
        let file = try await client.download(Fixture.endpoint("/file"), to: destination, maximumSize: 10_000).reply
        #expect(file.value.resumedBytes == 0)
        #expect(try Data(contentsOf: destination).count == 10_000)
    }
}
