// The README's first example, word for word (checked by DocArticleSnippetCheck): this target only has to
// build (`make test` builds it); running it needs the demo server on 127.0.0.1:8080.
// doc-snippet: README
import Courier
import Foundation

struct User: Codable, Sendable { var id: Int64; var name: String; var email: String }
struct Envelope<T: Codable & Sendable>: Codable, Sendable { var code: Int; var message: String; var data: T }

enum UserError: Int, BusinessError {
    case userNotFound = 301
    var message: String { "The user does not exist." }
}
// Messages in other languages: one table per language (English and Simplified Chinese ship with Courier).
MessageCatalog.update(.simplifiedChinese) { $0.setMessages([UserError.userNotFound: "用户不存在~"]) }

let api = APIService(name: "api", baseURLs: [
    .test: [URL(string: "http://127.0.0.1:8080")!],
    .release: [URL(string: "https://api.example.com")!],
], environment: .release)

// Module "user": its own header fields, interceptors and business-code mapping.
var users = APIModule(name: "user", service: api, businessRule: BusinessRule(mapping: UserError.self))
users.interceptors = [SetHeaders([.userAgent: "MyApp/2.1"])]

// Module "topic": different interceptors; nothing registered on "user" runs for it.
var topics = APIModule(name: "topic", service: api)
topics.interceptors = [SetHeaders([HTTPField.Name("X-Feature")!: "topics-v2"])]

extension Endpoint {
    static func user(_ id: Int64, in module: APIModule) -> Endpoint {
        Endpoint(name: "getUser", module: module, path: "/users/\(id)")
    }
}

// Global interceptors run outermost, then the module's, then the endpoint's.
let client = CourierClient(configuration: .init(interceptors: [RequestID()]))
api.switchEnvironment(to: .test)                      // switch servers at run time

do {
    let reply = try await client.send(.user(7, in: users), decoding: Envelope<User>.self,
                                      options: .init(trace: true))
    print(reply.value.data.name, reply.metadata.status, reply.metadata.duration)
    print(reply.metadata.trace!)                      // every stage and what it changed
    let raw = try await client.send(.user(7, in: users))   // the same call, as a raw Value
    print(raw.value["data"]?["email"] ?? "none")
} catch let error as CourierError {
    switch error.code {
    case .timedOut, .cannotConnect: print("offline?", error.message)
    case .notFound: print("no such endpoint")
    case .business where error.business(as: UserError.self) == .userNotFound: print("sign up first")
    default: print(error)                             // [category.code number] message (context)
    }
    print(error.message(in: .simplifiedChinese))
}
// end-doc-snippet
