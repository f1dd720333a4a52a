import Foundation
import Model
import Testing

@Suite struct ObjectGraphTests {
    @Test func changesRoundTripThroughJSON() throws {
        let changes: [Change] = [
            .insert(ObjectID("t1"), entity: Entity.textEntry, attributes: [
                "text": .string("hello"), "modified": .date(Date(timeIntervalSince1970: 1_700_000_000.25)),
                "n": .int(42), "x": .double(0.5), "b": .bool(true), "nothing": .null,
            ]),
            .update(ObjectID("t1"), attributes: ["text": .string("bye")]),
            .delete(ObjectID("t1")),
        ]
        let data = try JSONEncoder().encode(changes)
        #expect(try JSONDecoder().decode([Change].self, from: data) == changes)
    }

    @Test func applyInsertsUpdatesAndDeletes() {
        var graph = ObjectGraph()
        graph.apply([
            .insert(ObjectID("t1"), entity: Entity.textEntry, attributes: ["text": .string("a")]),
            .insert(ObjectID("m1"), entity: Entity.modelVersion, attributes: ["version": .int(2)]),
            .update(ObjectID("t1"), attributes: ["text": .string("b")]),
            .update(ObjectID("missing"), attributes: ["text": .string("ignored")]),
        ])
        #expect(graph.textEntry?.text == "b")
        #expect(graph.objects.count == 2)
        graph.apply([.delete(ObjectID("m1"))])
        #expect(graph.objects(of: Entity.modelVersion).isEmpty)
    }

    @Test func seedIdentifiersAreDeterministic() {
        #expect(ObjectID.seed("welcome") == ObjectID.seed("welcome"))
        #expect(ObjectID.random() != ObjectID.random())
    }
}
