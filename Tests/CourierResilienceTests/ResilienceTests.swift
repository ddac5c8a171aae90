import CourierResilience
import CourierTesting
import Foundation
import HTTPTypes
import CourierTestSupport
import Testing

@Suite struct RetryStateTests {
    @Test func backsOffExponentiallyUntilAttemptsRunOut() {
        var state = RetryState(policy: .exponential(attempts: 4, initialDelay: .milliseconds(500)), method: .get,
                               random: { 0.5 })
        #expect(state.record(.failure(.timedOut)) == .retry(after: .milliseconds(500)))
        #expect(state.record(.failure(.connectionLost)) == .retry(after: .seconds(1)))
        #expect(state.record(.response(status: 503, retryAfter: nil)) == .retry(after: .seconds(2)))
        #expect(state.record(.response(status: 503, retryAfter: nil)) == .finish)
        #expect(state.attempts == 4)
    }

    @Test func jitterSpreadsTheDelay() {
        var low = RetryState(policy: .exponential(attempts: 3, initialDelay: .seconds(1)), method: .get, random: { 0 })
        var high = RetryState(policy: .exponential(attempts: 3, initialDelay: .seconds(1)), method: .get,
                              random: { 0.999_999 })
        #expect(low.record(.failure(.timedOut)) == .retry(after: .milliseconds(800)))
        guard case .retry(let delay) = high.record(.failure(.timedOut)) else {
            Issue.record("expected a retry")
            return
        }
        #expect(delay > .milliseconds(1_199) && delay <= .milliseconds(1_200))
    }

    @Test func capsAtTheMaximumDelay() {
        var policy = RetryPolicy.exponential(attempts: 10, initialDelay: .seconds(10))
        policy.maximumDelay = .seconds(25)
        policy.jitter = 0
        var state = RetryState(policy: policy, method: .get)
        #expect(state.record(.failure(.timedOut)) == .retry(after: .seconds(10)))
        #expect(state.record(.failure(.timedOut)) == .retry(after: .seconds(20)))
        #expect(state.record(.failure(.timedOut)) == .retry(after: .seconds(25)))
    }

    @Test(arguments: [
        RetryState.Outcome.response(status: 200, retryAfter: nil), .response(status: 404, retryAfter: nil),
        .response(status: 500, retryAfter: nil), .failure(.cancelled), .failure(.malformedInput),
        .failure(.tlsFailure),
    ])
    func doesNotRetryOtherOutcomes(outcome: RetryState.Outcome) {
        var state = RetryState(policy: .exponential(attempts: 5), method: .get)
        #expect(state.record(outcome) == .finish)
    }

    @Test(arguments: [408, 429, 502, 503, 504])
    func retriesAlamofireStatuses(status: Int) {
        var state = RetryState(policy: .exponential(attempts: 2), method: .get)
        #expect(state.record(.response(status: status, retryAfter: nil)) != .finish)
    }

    @Test func nonIdempotentMethodsAndUnreplayableBodiesAreNotRetried() {
        var post = RetryState(policy: .exponential(attempts: 3), method: .post)
        #expect(post.record(.failure(.timedOut)) == .finish)
        var patch = RetryState(policy: .exponential(attempts: 3), method: .patch)
        #expect(patch.record(.failure(.timedOut)) == .finish)
        var optedIn = RetryState(policy: RetryPolicy.exponential(attempts: 3).allowingNonIdempotent(), method: .post)
        #expect(optedIn.record(.failure(.timedOut)) != .finish)
        var streamed = RetryState(policy: .exponential(attempts: 3), method: .put, isReplayable: false)
        #expect(streamed.record(.failure(.timedOut)) == .finish)
    }

    @Test func honoursRetryAfterWithinItsCap() {
        var state = RetryState(policy: .exponential(attempts: 3), method: .get)
        #expect(state.record(.response(status: 503, retryAfter: .seconds(7))) == .retry(after: .seconds(7)))
        var tooLong = RetryState(policy: .exponential(attempts: 3), method: .get)
        #expect(tooLong.record(.response(status: 429, retryAfter: .seconds(3_600))) == .finish)
    }

    @Test func parsesRetryAfterSecondsAndDates() {
        let now = Date(timeIntervalSince1970: 784_111_767)   // Sun, 06 Nov 1994 08:49:27 GMT
        #expect(RetryState.retryAfter(in: [.retryAfter: "120"], now: now) == .seconds(120))
        #expect(RetryState.retryAfter(in: [.retryAfter: "Sun, 06 Nov 1994 08:49:37 GMT"], now: now) == .seconds(10))
        #expect(RetryState.retryAfter(in: [.retryAfter: "soon"], now: now) == nil)
        #expect(RetryState.retryAfter(in: [:], now: now) == nil)
    }

    /// A server's `Retry-After` and a caller's policy with absurd numbers give a delay (or nothing), never a
    /// trap: years beyond four digits are not an HTTP date, a clock at infinity waits zero, a far date waits
    /// at most `Int64.max` nanoseconds, and NaN or infinite multipliers and jitters back off by zero.
    @Test func absurdDatesAndPoliciesGiveADelay() {
        let now = Date(timeIntervalSince1970: 784_111_767)
        for year in ["2000000000", "99999999999999", "9223372036854775807", "-9223372036854775808", "+1994", "199"] {
            #expect(RetryState.retryAfter(in: [.retryAfter: "Sun, 06 Nov \(year) 08:49:37 GMT"], now: now) == nil)
        }
        let century: HTTPFields = [.retryAfter: "Sat, 06 Nov 2094 08:49:37 GMT"]
        #expect(RetryState.retryAfter(in: century, now: now) == .seconds(3_155_760_010))
        let date: HTTPFields = [.retryAfter: "Sun, 06 Nov 9999 08:49:37 GMT"]
        #expect(RetryState.retryAfter(in: date, now: now) == .nanoseconds(Int64.max))
        #expect(RetryState.retryAfter(in: date, now: Date(timeIntervalSince1970: .infinity)) == .zero)
        #expect(RetryState.retryAfter(in: date, now: Date(timeIntervalSince1970: -.infinity)) == .nanoseconds(Int64.max))
        #expect(RetryState.retryAfter(in: date, now: Date(timeIntervalSince1970: -1e300)) == .nanoseconds(Int64.max))

        var policy = RetryPolicy.exponential(attempts: 10)
        #expect(policy.backoff(retry: .min) == policy.initialDelay && policy.backoff(retry: .max) == policy.maximumDelay)
        policy.multiplier = .nan
        #expect(policy.backoff(retry: 2) == .zero)
        policy.multiplier = .infinity
        policy.initialDelay = .zero
        #expect(policy.backoff(retry: 3) == .zero)
        policy.multiplier = 2
        policy.initialDelay = .seconds(10_000_000_000)
        policy.maximumDelay = .seconds(10_000_000_000)
        #expect(policy.backoff(retry: 1) == .nanoseconds(Int64.max))
        for jitter in [Double.nan, .infinity, -.infinity] {
            var jittery = RetryPolicy.exponential(attempts: 3, initialDelay: .seconds(1))
            jittery.jitter = jitter
            var state = RetryState(policy: jittery, method: .get, random: { 0.99 })
            let action = state.record(.failure(.timedOut))
            #expect(action == .retry(after: jitter > 0 ? .milliseconds(1_980) : .seconds(1)), "\(jitter)")
        }
        var huge = RetryState(policy: policy, method: .get, random: { 0.99 })
        #expect(huge.record(.failure(.timedOut)) == .retry(after: .nanoseconds(Int64.max)))
    }
}

@Suite struct RetryInterceptorTests {
    func client(_ transport: InMemoryTransport, clock: RecordingClock, policy: RetryPolicy) -> CourierClient {
        CourierClient(transport: transport, configuration: .init(
            interceptors: [RetryInterceptor(defaultPolicy: policy, random: { 0.5 })], clock: clock))
    }

    @Test func retriesUntilSuccessWithBackoffOnTheInjectedClock() async throws {
        let count = Locked(0)
        let transport = InMemoryTransport { _, _ in
            let n = count.withLock { $0 += 1; return $0 }
            return n < 3 ? jsonResponse(.serviceUnavailable, #"{"message":"busy"}"#) : jsonResponse()
        }
        let clock = RecordingClock()
        let reply = try await client(transport, clock: clock, policy: .exponential(attempts: 5, initialDelay: .milliseconds(200)))
            .send(Fixture.endpoint("/r"))
        #expect(reply.metadata.status == .ok)
        #expect(transport.requests.count == 3)
        #expect(clock.sleeps == [.milliseconds(200), .milliseconds(400)])
    }

    @Test func givesUpAfterTheAttemptsWithTheLastError() async throws {
        let transport = InMemoryTransport.failing(.timedOut)
        let clock = RecordingClock()
        let error = await #expect(throws: CourierError.self) {
            _ = try await client(transport, clock: clock, policy: .exponential(attempts: 3, initialDelay: .seconds(1)))
                .send(Fixture.endpoint("/r"))
        }
        #expect(error?.code == .timedOut)
        #expect(transport.requests.count == 3)
        #expect(clock.sleeps == [.seconds(1), .seconds(2)])
    }

    @Test func honoursRetryAfterFromTheServer() async throws {
        let count = Locked(0)
        let transport = InMemoryTransport { _, _ in
            let n = count.withLock { $0 += 1; return $0 }
            return n == 1 ? jsonResponse(.serviceUnavailable, "{}", fields: [.retryAfter: "3"]) : jsonResponse()
        }
        let clock = RecordingClock()
        _ = try await client(transport, clock: clock, policy: .exponential(attempts: 3))
            .send(Fixture.endpoint("/r"))
        #expect(clock.sleeps == [.seconds(3)])
    }

    @Test func postIsNotRetriedUnlessTheEndpointOptsIn() async throws {
        let transport = InMemoryTransport { _, _ in jsonResponse(.badGateway, "{}") }
        let clock = RecordingClock()
        let client = client(transport, clock: clock, policy: .exponential(attempts: 3))
        var post = Fixture.endpoint("/orders")
        post.method = .post
        post.body = ["item": 1]
        let error = await #expect(throws: CourierError.self) { _ = try await client.send(post) }
        #expect(error?.code == .badGateway)
        #expect(transport.requests.count == 1)
        #expect(clock.sleeps.isEmpty)

        post.retryPolicy = RetryPolicy.exponential(attempts: 3).allowingNonIdempotent()
        let retried = await #expect(throws: CourierError.self) { _ = try await client.send(post) }
        #expect(retried?.code == .badGateway)
        #expect(transport.requests.count == 4)
    }

    @Test func endpointPolicyWinsOverTheDefault() async throws {
        let transport = InMemoryTransport.failing(.cannotConnect)
        let clock = RecordingClock()
        var endpoint = Fixture.endpoint("/r")
        endpoint.retryPolicy = RetryPolicy.none
        let error = await #expect(throws: CourierError.self) {
            _ = try await client(transport, clock: clock, policy: .exponential(attempts: 5)).send(endpoint)
        }
        #expect(error?.code == .cannotConnect)
        #expect(transport.requests.count == 1)
    }
}

@Suite struct FailoverTests {
    @Test func windowSwitchesOnlyPastTheThreshold() {
        var window = FailoverWindow(size: 40, threshold: 0.1, minimumCalls: 10)
        for _ in 0..<36 { #expect(window.record(.success) == .none) }
        for _ in 0..<4 { #expect(window.record(.networkFailure) == .none) }
        #expect(window.failureRate == 0.1)
        #expect(window.record(.networkFailure) == .switchHost)   // slides out a success: 5 of 40
        #expect(window.count == 0)
    }

    @Test func windowNeedsTheMinimumCalls() {
        var window = FailoverWindow(size: 40, threshold: 0.1, minimumCalls: 10)
        for _ in 0..<9 { #expect(window.record(.networkFailure) == .none) }
        #expect(window.record(.networkFailure) == .switchHost)
    }

    /// A size set below 1 after the window was made is taken as 1 (it used to index an empty ring).
    @Test func aSizeBelowOneIsOne() {
        var window = FailoverWindow(size: 10, threshold: 0.5, minimumCalls: 1)
        window.size = 0
        #expect(window.size == 1)
        #expect(window.record(.success) == .none)
        #expect(window.record(.networkFailure) == .switchHost)
        window.size = .min
        #expect(window.size == 1 && window.record(.success) == .none)
    }

    @Test func windowSlides() {
        var window = FailoverWindow(size: 10, threshold: 0.5, minimumCalls: 10)
        for _ in 0..<5 { _ = window.record(.networkFailure) }
        for _ in 0..<5 { _ = window.record(.success) }
        #expect(window.failureRate == 0.5)
        for _ in 0..<5 { #expect(window.record(.success) == .none) }
        #expect(window.failures == 0)
    }

    func makeService() -> APIService {
        APIService(name: "api", baseURLs: [.release: [
            URL(string: "http://a.test")!, URL(string: "http://b.test")!, URL(string: "http://c.test")!,
        ]], environment: .release)
    }

    @Test func switchesHostAfterTooManyNetworkFailures() async throws {
        let service = makeService()
        let down = Locked<Set<String>>([])
        let transport = InMemoryTransport { request, _ in
            if down.withLock({ $0.contains(request.authority ?? "") }) { throw TransportFailure.cannotConnect.error() }
            return jsonResponse()
        }
        let switches = Locked<[String]>([])
        let failover = FailoverInterceptor { _, url in switches.withLock { $0.append(url.host ?? "") } }
        let client = CourierClient(transport: transport, configuration: .init(interceptors: [failover]))
        let endpoint = Endpoint(name: "ping", module: APIModule(name: "m", service: service), path: "/ping")

        for _ in 0..<36 { _ = try await client.send(endpoint) }
        down.withLock { _ = $0.insert("a.test") }
        // Each call meets the refused connection and is routed on to b.test at once: it succeeds, while the
        // failure still counts against a.test's window.
        for _ in 0..<4 {
            _ = try await client.send(endpoint)
            #expect(transport.requests.suffix(2).map(\.head.authority) == ["a.test", "b.test"])
        }
        #expect(service.currentBaseURL.host == "a.test")          // 4 of 40: not past 10 %
        _ = try await client.send(endpoint)
        #expect(service.currentBaseURL.host == "b.test")
        #expect(switches.withLock { $0 } == ["b.test"])
        let sent = transport.requests.count
        _ = try await client.send(endpoint)
        #expect(transport.requests.count == sent + 1)             // later calls start on b.test
        #expect(transport.requests.last?.head.authority == "b.test")
        // The new window holds the switching call's own success on b.test and this call's.
        #expect(failover.window(of: service).count == 2)
    }

    @Test func httpErrorsDoNotCountAsNetworkFailures() async throws {
        let service = makeService()
        let transport = InMemoryTransport { _, _ in jsonResponse(.internalServerError, "{}") }
        let client = CourierClient(transport: transport, configuration: .init(interceptors: [FailoverInterceptor()]))
        let endpoint = Endpoint(name: "ping", module: APIModule(name: "m", service: service), path: "/ping")
        for _ in 0..<50 {
            let error = await #expect(throws: CourierError.self) { _ = try await client.send(endpoint) }
            #expect(error?.code == .internalServerError)
        }
        #expect(service.currentBaseURL.host == "a.test")
    }

    @Test func switchesOnExternalOrder() async throws {
        let service = makeService()
        let transport = InMemoryTransport { _, _ in jsonResponse() }
        let failover = FailoverInterceptor()
        let client = CourierClient(transport: transport, configuration: .init(interceptors: [failover]))
        let endpoint = Endpoint(name: "ping", module: APIModule(name: "m", service: service), path: "/ping")
        _ = try await client.send(endpoint)
        #expect(failover.window(of: service).count == 1)
        #expect(failover.switchHost(of: service, to: "c.test"))      // e.g. a push message names the host
        #expect(failover.window(of: service).count == 0)
        _ = try await client.send(endpoint)
        #expect(transport.requests.map(\.head.authority) == ["a.test", "c.test"])
        #expect(!failover.switchHost(of: service, to: "unknown.test"))
        #expect(service.currentBaseURL.host == "c.test")
    }

    /// An app that makes a service per call: the windows of freed services are dropped, and a new service
    /// starts with an empty window (even at a freed one's address).
    @Test func windowsOfFreedServicesAreDropped() async throws {
        let transport = InMemoryTransport(recording: false) { _, _ in throw TransportFailure.cannotConnect.error() }
        let failover = FailoverInterceptor()
        let client = CourierClient(transport: transport, configuration: .init(interceptors: [failover]))
        for _ in 0..<2_000 {
            let service = makeService()
            let endpoint = Endpoint(name: "ping", module: APIModule(name: "m", service: service), path: "/ping")
            _ = try? await client.send(endpoint)
            #expect(failover.window(of: service).count == 1)
        }
        #expect(failover.trackedServiceCount <= 128)
        #expect(failover.window(of: makeService()).count == 0)
    }
}

@Suite struct ConcurrencyLimiterTests {
    @Test func queuedCallsStartByPriorityThenArrival() async throws {
        let gate = Gate()
        let order = Locked<[String]>([])
        let transport = InMemoryTransport { request, _ in
            let path = request.path ?? ""
            if path == "/block" { await gate.wait() } else { order.withLock { $0.append(path) } }
            return jsonResponse()
        }
        let limiter = ConcurrencyLimiter(maximumPerHost: 1)
        let client = CourierClient(transport: transport, configuration: .init(interceptors: [limiter]))
        func endpoint(_ path: String, _ priority: Priority) -> Endpoint {
            var endpoint = Fixture.endpoint(path)
            endpoint.priority = priority
            return endpoint
        }
        let blocker = client.dispatch(endpoint("/block", .normal))
        #expect(await eventually { limiter.running(host: "api.test") == 1 })
        var calls: [Call<Value>] = []
        for (index, (path, priority)) in [("/low", Priority.low), ("/normal", .normal), ("/high1", .high),
                                          ("/high2", .high)].enumerated() {
            calls.append(client.dispatch(endpoint(path, priority)))
            #expect(await eventually { limiter.waiting(host: "api.test") == index + 1 })
        }
        gate.open()
        _ = try await blocker.reply
        for call in calls { _ = try await call.reply }
        #expect(order.withLock { $0 } == ["/high1", "/high2", "/normal", "/low"])
        #expect(limiter.running(host: "api.test") == 0)
    }

    @Test func cancellingAQueuedCallRemovesIt() async throws {
        let gate = Gate()
        let transport = InMemoryTransport { request, _ in
            if request.path == "/block" { await gate.wait() }
            return jsonResponse()
        }
        let limiter = ConcurrencyLimiter(maximumPerHost: 1)
        let client = CourierClient(transport: transport, configuration: .init(interceptors: [limiter]))
        let blocker = client.dispatch(Fixture.endpoint("/block"))
        #expect(await eventually { limiter.running(host: "api.test") == 1 })
        let queued = client.dispatch(Fixture.endpoint("/queued"))
        #expect(await eventually { limiter.waiting(host: "api.test") == 1 })
        client.cancel(queued.id)
        let error = await #expect(throws: CourierError.self) { _ = try await queued.reply }
        #expect(error?.code == .cancelled)
        #expect(limiter.waiting(host: "api.test") == 0)
        gate.open()
        _ = try await blocker.reply
        #expect(transport.requests.map(\.head.path) == ["/block"])
        #expect(limiter.running(host: "api.test") == 0)
    }

    /// A call asks for the host's slot while it is taken, and every call in flight ends before it joins the queue:
    /// no release is left to wake it, so it must take the slot itself (it used to wait forever).
    @Test(.timeLimit(.minutes(2))) func aSlotFreedWhileACallQueuesIsTaken() async throws {
        let transport = InMemoryTransport { _, _ in jsonResponse() }
        let limiter = ConcurrencyLimiter(maximumPerHost: 1)
        let client = CourierClient(transport: transport, configuration: .init(interceptors: [limiter]))
        for _ in 0..<500 {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<4 { group.addTask { _ = try await client.send(Fixture.endpoint("/x")) } }
                try await group.waitForAll()
            }
        }
        #expect(limiter.running(host: "api.test") == 0)
        #expect(limiter.waiting(host: "api.test") == 0)
    }

    @Test func differentHostsDoNotWaitForEachOther() async throws {
        let gate = Gate()
        let transport = InMemoryTransport { request, _ in
            if request.authority == "api.test" { await gate.wait() }
            return jsonResponse()
        }
        let limiter = ConcurrencyLimiter(maximumPerHost: 1)
        let client = CourierClient(transport: transport, configuration: .init(interceptors: [limiter]))
        let blocker = client.dispatch(Fixture.endpoint("/block"))
        #expect(await eventually { limiter.running(host: "api.test") == 1 })
        let other = Endpoint(name: "o", module: APIModule(name: "o", service: APIService(
            name: "other", baseURL: URL(string: "http://other.test")!)), path: "/x")
        _ = try await client.send(other)
        gate.open()
        _ = try await blocker.reply
    }
}
