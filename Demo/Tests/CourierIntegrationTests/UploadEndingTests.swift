import Courier
import CourierDemoServer
import Foundation
import HTTPTypes
import Testing

/// An upload that ends early, on every transport over loopback, lets go of what it read: a producer that
/// stalls is timed out and released, and a file is closed when the server refuses it before reading it.
@Suite(.timeLimit(.minutes(10))) struct UploadEndingTests {
    /// Descriptors of this process open on a file whose path contains `name`.
    static func openFiles(named name: String) -> Int {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return descriptors.filter {
            ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) ?? "").contains(name)
        }.count
    }

    /// A one-shot body whose producer yields once and then waits forever: the call's timeout ends the call
    /// (the URLSession transport spooled it outside the deadline, and waited for ever), and the producer is let
    /// go (AsyncHTTPClient's body task kept waiting for its next chunk, holding it).
    @Test(arguments: TransportUnderTest.allCases)
    func aStalledProducerIsTimedOutAndReleased(_ kind: TransportUnderTest) async throws {
        let server = try await RawServer.start(head: "", then: .stall)
        defer { server.stop() }
        let request = HTTPRequest(method: .post, scheme: "http", authority: "127.0.0.1:\(server.port)", path: "/up")
        let released = Locked(0)
        try await kind.run { transport in
            for _ in 0..<5 {
                let (stream, continuation) = AsyncStream<Data>.makeStream()
                continuation.onTermination = { _ in released.withLock { $0 += 1 } }
                continuation.yield(Data("hello".utf8))
                let error = try await #require(throws: CourierError.self) {
                    try await transport.stream(
                        request, body: BodyStream(stream), options: TransportOptions(timeout: .milliseconds(300)),
                        into: CollectingSink(limit: 1 << 20))
                }
                #expect(error.code == .timedOut, "\(error.debugDescription)")
                withExtendedLifetime(continuation) {}     // the producer never finishes on its own
            }
        }
        #expect(await waitUntil { released.withLock { $0 } == 5 })
    }

    /// A server that answers 413 and closes before reading the upload: no descriptor of the file stays open.
    @Test(arguments: TransportUnderTest.allCases)
    func aRefusedFileUploadClosesTheFile(_ kind: TransportUnderTest) async throws {
        let server = try await RawServer.start(
            head: "HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", then: .close)
        defer { server.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let name = "refused-\(kind.rawValue)-\(UUID().uuidString).bin"
        let file = folder.appendingPathComponent(name)
        try Data(repeating: 7, count: 4 << 20).write(to: file)
        let request = HTTPRequest(method: .post, scheme: "http", authority: "127.0.0.1:\(server.port)", path: "/up")
        try await kind.run { transport in
            for _ in 0..<5 {
                await withTaskGroup(of: Void.self) { group in
                    for _ in 0..<8 {
                        group.addTask {
                            // Refused (413) or cut off (the connection closed mid-upload): either way it ends.
                            _ = try? await transport.stream(
                                request, body: try BodyStream.file(file, chunkSize: 64 << 10),
                                options: TransportOptions(timeout: .seconds(30)), into: CollectingSink(limit: 1 << 20))
                        }
                    }
                }
            }
        }
        #expect(await waitUntil { Self.openFiles(named: name) == 0 }, "\(Self.openFiles(named: name)) still open")
    }
}
