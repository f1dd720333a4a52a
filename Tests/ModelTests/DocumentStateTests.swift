import Model
import Testing

@Suite struct DocumentStateTests {
    @Test func statusStringsFollowTheSeed() {
        #expect(DocumentState.normal.statusString == "[Normal]")
        #expect(DocumentState.closed.statusString == "[Closed]")
        #expect(DocumentState([.closed, .editingDisabled]).statusString == "[Closed|Editing Disabled]")
        #expect(DocumentState([.savingError, .editingDisabled]).statusString == "[Saving Error|Editing Disabled]")
        #expect(DocumentState([.inConflict, .progressAvailable]).statusString == "[In Conflict|Progress Available]")
    }

    @Test func isAnOptionSet() {
        var state: DocumentState = .closed
        state.insert(.progressAvailable)
        state.remove(.closed)
        #expect(state == .progressAvailable)
        #expect(!state.contains(.closed))
    }
}

@Suite struct HybridLogicalClockTests {
    let a = DeviceID(UUID(uuidString: "00000000-0000-0000-0000-00000000000A")!)
    let b = DeviceID(UUID(uuidString: "00000000-0000-0000-0000-00000000000B")!)

    @Test func localTicksAreMonotonicEvenWhenTheWallClockGoesBack() {
        var clock = HybridLogicalClock()
        let first = clock.tick(now: 1000, device: a)
        let second = clock.tick(now: 900, device: a)
        let third = clock.tick(now: 1000, device: a)
        #expect(first < second && second < third)
    }

    @Test func observingARemoteStampOrdersLaterLocalStampsAfterIt() {
        var clock = HybridLogicalClock()
        let remote = Stamp(wall: 5000, counter: 3, device: b)
        clock.observe(remote)
        let local = clock.tick(now: 10, device: a)
        #expect(remote < local)
    }

    @Test func deviceBreaksTies() {
        #expect(Stamp(wall: 1, counter: 0, device: a) < Stamp(wall: 1, counter: 0, device: b))
    }
}

import Foundation
