import Courier

/// The demo server's data and counters. Users and topics are generated deterministically, so every
/// server starts with the same data.
public final class DemoState: Sendable {
    struct User: Sendable {
        var id: Int64
        var name: String
        var email: String
        var age: Int64
        var score: Double
        var active: Bool
        var tags: [String]
        var city: String
        var street: String
        var zip: String

        var value: Value {
            [
                "id": .int(id), "name": .string(name), "email": .string(email), "age": .int(age),
                "score": .double(score), "active": .bool(active), "tags": .array(tags.map(Value.string)),
                "address": ["city": .string(city), "street": .string(street), "zip": .string(zip)],
            ]
        }
    }

    struct Topic: Sendable {
        var id: Int64
        var title: String
        var body: String
        var authorID: Int64
        var tags: [String]
        var status: String
        var createdAt: String

        var value: Value {
            [
                "id": .int(id), "title": .string(title), "body": .string(body), "authorId": .int(authorID),
                "tags": .array(tags.map(Value.string)), "status": .string(status), "createdAt": .string(createdAt),
            ]
        }
    }

    private struct Data {
        var users: [User] = []
        var topics: [Topic] = []
        var requests = 0
        var delaysStarted = 0
        var delaysFinished = 0
        var delaysCancelled = 0
    }

    private let data: Locked<Data>

    init(userCount: Int) {
        let first = ["Zoë", "Peggy", "Heidi", "Ivan", "Judy", "Mallory", "Niaj", "Olivia", "Rupert", "Sybil", "Trent",
                     "Victor", "Walter", "Ada", "Grace", "李", "Søren", "José"]
        let last = ["Hernández", "Lopez", "Martinez", "Smith", "Chen", "Okafor", "Novak", "Tanaka", "Müller", "王"]
        let cities = ["North Haverbrook", "Springfield", "São Paulo", "Zürich", "上海", "Reykjavík", "Shelbyville"]
        let streets = ["Main Street", "Cedar Lane", "Evergreen Terrace", "Elm Street", "Oak Avenue"]
        let tagPool = ["trial", "admin", "apac", "newsletter", "beta", "vip"]
        var state = Data()
        for i in 0..<userCount {
            let name = "\(first[i % first.count]) \(last[(i * 7) % last.count])"
            let tagCount = (i * 5) % 4
            state.users.append(User(
                id: Int64(i + 1), name: name,
                email: "user\(i + 1)@example.com", age: Int64(18 + (i * 13) % 60),
                score: Double((i * 7919) % 100_000) / 100, active: i % 3 != 1,
                tags: (0..<tagCount).map { tagPool[(i + $0 * 2) % tagPool.count] },
                city: cities[i % cities.count], street: "\(1000 + (i * 37) % 9000) \(streets[i % streets.count])",
                zip: String(format5: (i * 4243) % 100_000)))
        }
        for i in 0..<23 {
            state.topics.append(Topic(
                id: Int64(i + 1), title: "Topic \(i + 1): \(["Swift", "Codecs", "Caching", "Retries"][i % 4])",
                body: "Discussion number \(i + 1).", authorID: Int64(1 + i % max(userCount, 1)),
                tags: [["swift"], ["xml", "protobuf"], [], ["network"]][i % 4],
                status: ["TOPIC_STATUS_PUBLISHED", "TOPIC_STATUS_DRAFT", "TOPIC_STATUS_ARCHIVED"][i % 3],
                createdAt: "2026-11-\(String(format2: 1 + i % 28))T08:00:00Z"))
        }
        self.data = Locked(state)
    }

    /// How many requests the server has answered.
    public var requestCount: Int { data.withLock { $0.requests } }
    /// Slow (`/delay`) requests started, finished and cancelled.
    public var delays: (started: Int, finished: Int, cancelled: Int) {
        data.withLock { ($0.delaysStarted, $0.delaysFinished, $0.delaysCancelled) }
    }

    func countRequest() { data.withLock { $0.requests += 1 } }
    func delayStarted() { data.withLock { $0.delaysStarted += 1 } }
    func delayEnded(cancelled: Bool) {
        data.withLock {
            if cancelled { $0.delaysCancelled += 1 } else { $0.delaysFinished += 1 }
        }
    }

    func user(id: Int64) -> User? { data.withLock { $0.users.first { $0.id == id } } }
    func users(page: Int, size: Int) -> (users: [User], total: Int) {
        data.withLock { state in
            let start = max(0, (page - 1) * size)
            let slice = start < state.users.count ? Array(state.users[start..<min(start + size, state.users.count)]) : []
            return (slice, state.users.count)
        }
    }

    func addUser(name: String, email: String, age: Int64, tags: [String], address: Value?) -> User? {
        data.withLock { state in
            guard !state.users.contains(where: { $0.name == name }) else { return nil }
            let user = User(
                id: (state.users.map(\.id).max() ?? 0) + 1, name: name, email: email, age: age, score: 0,
                active: true, tags: tags, city: address?["city"]?.stringValue ?? "",
                street: address?["street"]?.stringValue ?? "", zip: address?["zip"]?.stringValue ?? "")
            state.users.append(user)
            return user
        }
    }

    func topic(id: Int64) -> Topic? { data.withLock { $0.topics.first { $0.id == id } } }
    func topics(page: Int, size: Int) -> (topics: [Topic], total: Int) {
        data.withLock { state in
            let start = max(0, (page - 1) * size)
            let slice = start < state.topics.count ? Array(state.topics[start..<min(start + size, state.topics.count)]) : []
            return (slice, state.topics.count)
        }
    }

    func addTopic(title: String, body: String, authorID: Int64, tags: [String]) -> Topic {
        data.withLock { state in
            let topic = Topic(
                id: (state.topics.map(\.id).max() ?? 0) + 1, title: title, body: body, authorID: authorID, tags: tags,
                status: "TOPIC_STATUS_DRAFT", createdAt: "2026-11-22T00:00:00Z")
            state.topics.append(topic)
            return topic
        }
    }
}

extension String {
    fileprivate init(format5 value: Int) {
        let digits = "\(value)"
        let padding = 5 - digits.count
        self = padding > 0 ? String(repeating: "0", count: padding) + digits : digits
    }

    fileprivate init(format2 value: Int) {
        self = value < 10 ? "0\(value)" : "\(value)"
    }
}
