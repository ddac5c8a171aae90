import CourierSchema
import Testing

@Suite struct ViolationTests {
    @Test func validationErrorsNameTheFirstViolation() {
        var error = CourierError(.schemaViolation)
        error.violations = [
            .init(instanceLocation: "/data/users/3/age", keywordLocation: "/properties/age/minimum",
                  keyword: "minimum", message: "data/users/3/age: -1 is less than the minimum of 0"),
            .init(instanceLocation: "/data/page", keywordLocation: "/properties/page/type",
                  keyword: "type", message: "data/page: \"x\" is not an integer"),
        ]
        #expect(error.category == .validation)
        #expect(error.message.contains("-1 is less than the minimum of 0"))
        #expect(error.message.contains("and 1 more"))
    }
}
