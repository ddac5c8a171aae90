import CourierCodecs
import CourierTestSupport
import Foundation
import Testing

/// The demo API's user-list page in all three formats decodes to equal Values and equal typed models.
@Suite struct FixtureFormatsTests {
    struct Address: Codable, Hashable, Sendable { var city: String; var street: String; var zip: String }
    struct User: Codable, Hashable, Sendable {
        var id: Int64; var name: String; var email: String; var age: Int32; var score: Double; var active: Bool
        var tags: [String]; var address: Address
    }
    struct Page: Codable, Hashable, Sendable { var page: Int; var total: Int; var users: [User] }
    struct Envelope: Codable, Hashable, Sendable { var code: Int; var message: String; var data: Page }

    @Test(arguments: ["users_10", "users_5000"])
    func allThreeFormatsDecodeToEqualValuesAndModels(name: String) throws {
        let fixtures = Repository.root.appendingPathComponent("Fixtures")
        let schema = try ProtobufSchema(contentsOf: Repository.root.appendingPathComponent("Schemas/demo.pb"))
        var hints = CodingHints()
        hints.messageType = "demo.UserListResponse"
        hints.shape = ValueShape(of: Envelope.self)
        let json = try JSONCodec().decode(Data(contentsOf: fixtures.appendingPathComponent("\(name).json")), hints: hints)
        let xml = try XMLCodec().decode(Data(contentsOf: fixtures.appendingPathComponent("\(name).xml")), hints: hints)
        let protobuf = try ProtobufCodec(schema: schema).decode(Data(contentsOf: fixtures.appendingPathComponent("\(name).pb")), hints: hints)
        #expect(json == xml)
        #expect(json == protobuf)
        let models = try [json, xml, protobuf].map { try ValueDecoder().decode(Envelope.self, from: $0) }
        #expect(models[0] == models[1])
        #expect(models[0] == models[2])
        #expect(models[0].data.users.count == models[0].data.total)
    }
}
