import CourierCodecs
import Testing

@Suite struct ShapeTests {
    @Test func membersAndElementsOfShapes() {
        let shape: ValueShape = .optional(.object(["users": .array(.object(["age": .integer]))]))
        #expect(shape.member("users").element?.member("age") == .integer)
        #expect(shape.member("missing") == .any)
        #expect(ValueShape.map(.string).member("anything") == .string)
    }
}
