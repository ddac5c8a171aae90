public import Courier
public import CourierCodecs
public import CourierSchema
public import Foundation
import HTTPTypes

/// The client side of the demo API: its typed models, business errors, modules and endpoints — what an app
/// would write for one backend. Used by `courier demo` and the integration tests.
///
/// ```swift
/// let server = try await DemoServer.start()
/// let api = DemoAPI(baseURL: server.baseURL)
/// let client = CourierClient()
/// let reply = try await client.send(api.user(id: 1), decoding: DemoAPI.UserEnvelope.self)
/// print(reply.value.data.name)
/// ```
public struct DemoAPI: Sendable {
    /// A postal address.
    public struct Address: Codable, Sendable, Hashable {
        public var city: String
        public var street: String
        public var zip: String
    }

    /// A user.
    public struct User: Codable, Sendable, Hashable {
        public var id: Int64
        public var name: String
        public var email: String
        public var age: Int
        public var score: Double
        public var active: Bool
        public var tags: [String]
        public var address: Address?
    }

    /// One page of users.
    public struct UserPage: Codable, Sendable, Hashable {
        public var page: Int
        public var total: Int
        public var users: [User]
    }

    /// A new user (the body of `POST /users`).
    public struct NewUser: Codable, Sendable, Hashable {
        public var name: String
        public var email: String
        public var age: Int
        public var tags: [String]

        /// A new user.
        public init(name: String, email: String, age: Int, tags: [String] = []) {
            self.name = name
            self.email = email
            self.age = age
            self.tags = tags
        }
    }

    /// A new topic (the body of `POST /topics`).
    public struct NewTopic: Codable, Sendable, Hashable {
        public var title: String
        public var body: String
        public var authorId: Int64
        public var tags: [String]

        /// A new topic.
        public init(title: String, body: String, authorId: Int64, tags: [String] = []) {
            self.title = title
            self.body = body
            self.authorId = authorId
            self.tags = tags
        }
    }

    /// A topic.
    public struct Topic: Codable, Sendable, Hashable {
        public var id: Int64
        public var title: String
        public var body: String
        public var authorId: Int64
        public var tags: [String]
        public var status: String
        public var createdAt: String
    }

    /// One page of topics.
    public struct TopicPage: Codable, Sendable, Hashable {
        public var page: Int
        public var total: Int
        public var topics: [Topic]
    }

    /// The demo API's envelope around every answer.
    public struct Envelope<Payload: Codable & Sendable & Hashable>: Codable, Sendable, Hashable {
        public var code: Int
        public var message: String
        public var data: Payload
    }

    /// `{code, message, data: User}`.
    public typealias UserEnvelope = Envelope<User>
    /// `{code, message, data: UserPage}`.
    public typealias UserPageEnvelope = Envelope<UserPage>
    /// `{code, message, data: Topic}`.
    public typealias TopicEnvelope = Envelope<Topic>
    /// `{code, message, data: TopicPage}`.
    public typealias TopicPageEnvelope = Envelope<TopicPage>

    /// The user module's business errors.
    public enum UserError: Int, BusinessError, CaseIterable {
        /// 301: the user does not exist.
        case userNotFound = 301
        /// 302: the name is taken.
        case nameTaken = 302
        /// 303: a parameter is invalid.
        case invalidParameter = 303

        public var message: String {
            switch self {
            case .userNotFound: "The user does not exist."
            case .nameTaken: "That name is already taken."
            case .invalidParameter: "A parameter is invalid."
            }
        }
    }

    /// The topic module's business errors.
    public enum TopicError: Int, BusinessError, CaseIterable {
        /// 401: the topic does not exist.
        case topicNotFound = 401

        public var message: String { "The topic does not exist." }
    }

    /// Adds the demo's business errors in Simplified Chinese to the ``MessageCatalog`` (done by every
    /// ``DemoAPI`` initialiser; registering again changes nothing).
    public static func registerMessages() {
        MessageCatalog.update(.simplifiedChinese) { table in
            table.setMessages([UserError.userNotFound: "用户不存在~", .nameTaken: "用户名已被占用~", .invalidParameter: "参数有误~"])
            table.setMessages([TopicError.topicNotFound: "话题不存在~"])
        }
    }

    /// The codecs the demo API speaks (server and client alike): the standard ones, XML with the
    /// `<users><user>…</user></users>` wrapper form, and protobuf with the demo schema.
    public static var codecs: CodecSet {
        var xml = XMLCodec.Options()
        xml.arrayItemName = .dropTrailingS
        return CodecSet.standard.adding(XMLCodec(options: xml)).adding(ProtobufCodec(schema: protobufSchema))
    }

    /// The demo API's protobuf schema (an embedded copy of `Schemas/demo.pb`, compiled from `Schemas/demo.proto`).
    public static let protobufSchema: ProtobufSchema = {
        guard let data = Data(base64Encoded: EmbeddedSchemas.demoDescriptorSet),
            let schema = try? ProtobufSchema(descriptorSet: data)
        else { preconditionFailure("the embedded demo descriptor set does not load; run `make schemas`") }
        return schema
    }()

    /// The demo API's JSON Schemas (embedded copies of `Schemas/*.schema.json`), ready to compile.
    public static func schemaRegistry() throws -> SchemaRegistry {
        var registry = SchemaRegistry()
        for name in EmbeddedSchemas.jsonSchemas.keys.sorted() {
            _ = try registry.add(json: Data(EmbeddedSchemas.jsonSchemas[name]!.utf8))
        }
        try registry.verify()
        return registry
    }

    /// The backend.
    public let service: APIService
    /// The user module.
    public var users: APIModule
    /// The topic module.
    public var topics: APIModule

    /// The demo API at `baseURL`.
    public init(baseURL: URL) {
        Self.registerMessages()
        service = APIService(name: "demo", baseURL: baseURL)
        users = APIModule(name: "user", service: service, businessRule: BusinessRule(mapping: UserError.self))
        topics = APIModule(name: "topic", service: service, businessRule: BusinessRule(mapping: TopicError.self))
    }

    /// `GET /users/:id`.
    public func user(id: Int64, format: ContentFormat = .json) -> Endpoint {
        var endpoint = Endpoint(name: "getUser", module: users, path: "/users/\(id)")
        endpoint.responseFormat = format
        endpoint.responseMessage = "demo.UserResponse"
        endpoint.responseSchema = "https://courier.example/schemas/user.schema.json#/$defs/response"
        return endpoint
    }

    /// `GET /users?page=&size=`.
    public func users(page: Int, size: Int = 10, format: ContentFormat = .json) -> Endpoint {
        var endpoint = list("listUsers", module: users, path: "/users", page: page, size: size, format: format,
                            message: "demo.UserListResponse")
        endpoint.responseSchema = "https://courier.example/schemas/userlist.schema.json"
        return endpoint
    }

    /// `POST /users`.
    public func createUser(_ user: NewUser, format: ContentFormat = .json) throws -> Endpoint {
        try create("createUser", module: users, path: "/users", body: user, format: format,
                   message: "demo.NewUser", answer: "demo.UserResponse")
    }

    /// `GET /topics/:id`.
    public func topic(id: Int64, format: ContentFormat = .json) -> Endpoint {
        var endpoint = Endpoint(name: "getTopic", module: topics, path: "/topics/\(id)")
        endpoint.responseFormat = format
        endpoint.responseMessage = "demo.TopicResponse"
        return endpoint
    }

    /// `GET /topics?page=&size=`.
    public func topics(page: Int, size: Int = 10, format: ContentFormat = .json) -> Endpoint {
        list("listTopics", module: topics, path: "/topics", page: page, size: size, format: format,
             message: "demo.TopicListResponse")
    }

    /// `POST /topics`.
    public func createTopic(_ topic: NewTopic, format: ContentFormat = .json) throws -> Endpoint {
        try create("createTopic", module: topics, path: "/topics", body: topic, format: format,
                   message: "demo.NewTopic", answer: "demo.TopicResponse")
    }

    /// A paged list: `GET path?page=&size=`, answered as `message`.
    private func list(
        _ name: String, module: APIModule, path: String, page: Int, size: Int, format: ContentFormat, message: String
    ) -> Endpoint {
        var endpoint = Endpoint(name: name, module: module, path: path,
                                query: [QueryItem("page", "\(page)"), QueryItem("size", "\(size)")])
        endpoint.responseFormat = format
        endpoint.responseMessage = message
        return endpoint
    }

    /// A create call: `POST path` with `body` sent as `message` and answered as `answer`, both in `format`.
    private func create<Body: Encodable>(
        _ name: String, module: APIModule, path: String, body: Body, format: ContentFormat, message: String,
        answer: String
    ) throws -> Endpoint {
        var endpoint = Endpoint(name: name, module: module, method: .post, path: path)
        endpoint.body = try Value(encoding: body)
        endpoint.requestFormat = format
        endpoint.responseFormat = format
        endpoint.requestMessage = message
        endpoint.responseMessage = answer
        return endpoint
    }

    /// `GET /delay/:ms`: answers after `milliseconds`.
    public func slow(milliseconds: Int, timeout: Duration? = nil) -> Endpoint {
        var endpoint = Endpoint(name: "slow", module: users, path: "/delay/\(milliseconds)")
        endpoint.timeout = timeout
        return endpoint
    }

    /// `GET /status/:code`: answers with that HTTP status.
    public func status(_ code: Int) -> Endpoint {
        Endpoint(name: "status\(code)", module: users, path: "/status/\(code)")
    }

    /// `GET /invalid/users/:id`: a user that breaks the user schema (age -1, zip "ABCDE").
    public func invalidUser(id: Int64) -> Endpoint {
        var endpoint = Endpoint(name: "getInvalidUser", module: users, path: "/invalid/users/\(id)")
        endpoint.responseMessage = "demo.UserResponse"
        endpoint.responseSchema = "https://courier.example/schemas/user.schema.json#/$defs/response"
        return endpoint
    }
}
