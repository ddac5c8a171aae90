import Courier
import Foundation
import HTTPTypes
import Testing

/// `Endpoint.priority` reaches the transport (URLSession's task priority) and the call's task.
@Suite(.timeLimit(.minutes(10))) struct PriorityTests {
    final class RecordingTransport: Transport {
        let seen = Locked<[Priority]>([])
        func send(_ request: HTTPRequest, body: Data?, options: TransportOptions) async throws -> (HTTPResponse, Data) {
            seen.withLock { $0.append(options.priority) }
            return (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]), Data("{}".utf8))
        }
    }

    @Test func theTransportIsToldEachCallsPriority() async throws {
        let transport = RecordingTransport()
        let client = CourierClient(transport: transport)
        for priority in [Priority.low, .normal, .high, Priority(42)] {
            var endpoint = Endpoint(name: "p", module: APIModule(name: "m", service: service), path: "/p")
            endpoint.priority = priority
            _ = try await client.send(endpoint)
        }
        #expect(transport.seen.withLock { $0 } == [.low, .normal, .high, Priority(42)])
    }

    @Test func prioritiesMapOntoTaskAndURLSessionPriorities() {
        #expect(Priority.low.taskPriority == .low)
        #expect(Priority.normal.taskPriority == .medium)
        #expect(Priority.high.taskPriority == .high)
        #expect(Priority(1_000).taskPriority == .high)
        #expect(Priority.low.urlSessionPriority == 0.25)
        #expect(Priority.normal.urlSessionPriority == 0.5)
        #expect(Priority.high.urlSessionPriority == 0.75)
        #expect(Priority(10_000).urlSessionPriority == 1)
        #expect(Priority(-10_000).urlSessionPriority == 0)
    }
}
