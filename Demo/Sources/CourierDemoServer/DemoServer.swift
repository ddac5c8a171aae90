import Courier
import CourierCodecs
public import Foundation
import Hummingbird
public import Logging
import NIOCore
import ServiceLifecycle

/// A real HTTP server on 127.0.0.1 speaking the demo API (users and topics; see `Schemas/demo.proto`) in
/// JSON, XML and Protocol Buffers, chosen by the request's `Accept` header (or `?format=`). It starts in
/// process on an ephemeral port, for the `courier demo` tour and for integration tests.
///
/// Besides the API it answers business errors (`GET /users/404404` → code 301), HTTP errors
/// (`GET /status/503`), slow responses (`GET /delay/2000`), an echo (`/echo`) and a response that breaks its
/// schema (`GET /invalid/users/1`).
///
/// ```swift
/// let server = try await DemoServer.start()
/// defer { Task { await server.stop() } }
/// let api = APIService(name: "demo", baseURL: server.baseURL)
/// // ... call http://127.0.0.1:\(server.port)/users/1
/// await server.stop()
/// ```
public final class DemoServer: Sendable {
    /// Settings of a demo server.
    public struct Options: Sendable {
        /// The port (0: an ephemeral port).
        public var port: Int
        /// How many users exist (ids 1...userCount).
        public var userCount: Int
        /// Log requests to the given logger.
        public var logger: Logger

        /// Defaults: ephemeral port, 57 users, no logging.
        public init(port: Int = 0, userCount: Int = 57,
                    logger: Logger = Logger(label: "courier.demo-server", factory: { _ in SwiftLogNoOpLogHandler() })) {
            self.port = port
            self.userCount = userCount
            self.logger = logger
        }
    }

    /// The port the server listens on.
    public let port: Int
    /// `http://127.0.0.1:PORT`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }
    /// The server's state (users, topics, counters), for tests that look behind the API.
    public let state: DemoState

    private let group: ServiceGroup
    private let runner: Task<Void, any Error>

    private init(port: Int, state: DemoState, group: ServiceGroup, runner: Task<Void, any Error>) {
        self.port = port
        self.state = state
        self.group = group
        self.runner = runner
    }

    /// The route groups every demo server serves, in registration order.
    static let routeGroups: [any DemoRouteGroup] = [
        UserRoutes(), TopicRoutes(), ControlRoutes(), SecurityRoutes(), CacheRoutes(), AuthRoutes(), LayerRoutes(),
        TransferRoutes(),
    ]

    /// Starts a server and returns once it accepts connections.
    public static func start(_ options: Options = Options()) async throws -> DemoServer {
        let state = DemoState(userCount: options.userCount)
        let router = Router()
        let exchange = DemoExchange(codecs: DemoExchange.defaultCodecs())
        for routes in routeGroups { routes.register(on: router, state: state, exchange: exchange) }
        let (portStream, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: options.port), serverName: "courier-demo"),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            },
            logger: options.logger)
        let group = ServiceGroup(services: [app], gracefulShutdownSignals: [], logger: options.logger)
        let runner = Task { try await group.run() }
        var port = 0
        for await bound in portStream {
            port = bound
            break
        }
        guard port > 0 else {
            runner.cancel()
            _ = await runner.result
            throw CourierError(.invalidConfiguration, detail: "the demo server could not bind 127.0.0.1:\(options.port)")
        }
        return DemoServer(port: port, state: state, group: group, runner: runner)
    }

    /// Stops the server and waits until it has shut down.
    public func stop() async {
        await group.triggerGracefulShutdown()
        runner.cancel()
        _ = await runner.result
    }
}

/// A set of routes of the demo server. Each file adds one group to ``DemoServer``'s list.
protocol DemoRouteGroup: Sendable {
    func register(on router: Router<BasicRequestContext>, state: DemoState, exchange: DemoExchange)
}

/// Reads request bodies and writes responses in the negotiated format, with the Courier codecs.
struct DemoExchange: Sendable {
    var codecs: CodecSet

    static func defaultCodecs() -> CodecSet {
        DemoAPI.codecs
    }

    /// The format the client asked for: `?format=` wins, then `Accept`, then JSON.
    func responseFormat(for request: Request) -> ContentFormat {
        if let name = request.uri.queryParameters["format"].map(String.init), let format = ContentFormat(name: name) {
            return format
        }
        if let accept = request.headers[.accept] {
            for part in accept.split(separator: ",") {
                if let format = ContentFormat(contentType: String(part)), codecs.codec(for: format) != nil,
                    format == .json || format == .xml || format == .protobuf
                {
                    return format
                }
            }
        }
        return .json
    }

    /// Decodes the request body by its `Content-Type` (JSON when absent).
    func body(of request: Request, messageType: String?) async throws -> Value {
        var request = request
        let buffer = try await request.collectBody(upTo: 8 << 20)
        let data = Data(buffer.readableBytesView)
        guard !data.isEmpty else { return .null }
        let format = request.headers[.contentType].flatMap(ContentFormat.init(contentType:)) ?? .json
        var hints = CodingHints()
        hints.messageType = messageType
        // XML carries no types: the message's shape turns `<age>36</age>` into a number and a single
        // `<tags>` into a one-element array, as for the other formats.
        hints.shape = messageType.flatMap { DemoAPI.protobufSchema.shape(of: $0) }
        return try codecs.decode(data, format: format, hints: hints)
    }

    /// A response with `value` encoded in the negotiated format.
    func respond(
        to request: Request, _ value: Value, status: HTTPResponse.Status = .ok, messageType: String?,
        headers: HTTPFields = [:]
    ) -> Response {
        let format = responseFormat(for: request)
        var hints = CodingHints()
        hints.messageType = messageType
        hints.rootName = "response"
        var fields = headers
        do {
            let data = try codecs.encode(value, format: format, hints: hints)
            fields[.contentType] = format.mediaType
            return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: data)))
        } catch {
            fields[.contentType] = "text/plain; charset=utf-8"
            let text = "demo server could not encode its answer as \(format): \(error)"
            return Response(status: .internalServerError, headers: fields,
                            body: .init(byteBuffer: ByteBuffer(string: text)))
        }
    }

    /// The demo API's envelope: `{code, message, data}`.
    static func envelope(code: Int = 200, message: String = "OK", data: Value?) -> Value {
        var object = Value.Object()
        object.append("code", .int(Int64(code)))
        object.append("message", .string(message))
        if let data { object.append("data", data) }
        return .object(object)
    }

    /// A failure answer in the demo API's shape (message type `demo.ErrorResponse`).
    func failure(
        to request: Request, code: Int, message: String, status: HTTPResponse.Status = .ok
    ) -> Response {
        respond(to: request, Self.envelope(code: code, message: message, data: nil), status: status,
                messageType: "demo.ErrorResponse")
    }
}
