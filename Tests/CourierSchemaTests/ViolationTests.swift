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

    @Test func violationsAreCourierSchemasDetail() {
        var error = CourierError(.schemaViolation, detail: "left out")
        #expect(error.violations.isEmpty)
        let violations = (1...3).map {
            SchemaViolation(instanceLocation: "/n/\($0)", keywordLocation: "/items/minimum", keyword: "minimum",
                            message: "n/\($0): \($0) is less than the minimum of 5")
        }
        error.violations = violations
        #expect(error.details[SchemaViolations.self]?.violations == violations)
        #expect(error.message == "The response does not match its schema. n/1: 1 is less than the minimum of 5 (and 2 more)")
        #expect(error.message(in: .simplifiedChinese).hasSuffix("n/1: 1 is less than the minimum of 5（另有 2 处）"))
        #expect(error.debugDescription.hasSuffix(
            "\n  - n/2: 2 is less than the minimum of 5\n  - n/3: 3 is less than the minimum of 5"))
        error.violations = []
        #expect(error.details.isEmpty)
        #expect(error.message == "The response does not match its schema. left out")
    }

    @Test func aRegisteredTemplateRetellsTheCountOfOtherViolations() {
        var error = CourierError(.schemaViolation)
        error.violations = [
            SchemaViolation(instanceLocation: "/a", keywordLocation: "/type", keyword: "type", message: "a: wrong"),
            SchemaViolation(instanceLocation: "/b", keywordLocation: "/type", keyword: "type", message: "b: wrong"),
        ]
        MessageCatalog.update("x-schema") { $0.templates[SchemaViolations.moreTemplate] = " [+{count}]" }
        #expect(error.message(in: "x-schema").hasSuffix("a: wrong [+1]"))
        #expect(error.message(in: "fr").hasSuffix("a: wrong (and 1 more)"))
    }
}
