import Testing
@testable import WearablesKit

@Suite("Devices and selectors")
struct DeviceTests {
    @Test("attaching a link greets the glasses; they become known and connected after their hello")
    func attach() throws {
        let rig = try Rig()
        let lists = Recorder<[DeviceIdentifier]>()
        let token = rig.wearables.addDevicesListener(lists.callback)
        #expect(lists.values == [[]])  // current list at once
        rig.wearables.attach(link: rig.device)
        #expect(rig.device.sent == [.hello(protocolVersion: linkProtocolVersion, pairingToken: nil)])
        #expect(rig.wearables.devices.isEmpty)  // not before hello
        rig.run()
        #expect(rig.wearables.devices == ["glasses-1"])
        #expect(lists.values == [[], ["glasses-1"]])
        let device = try #require(rig.wearables.deviceForIdentifier("glasses-1"))
        #expect(device.linkState == .connected)
        #expect(device.name == "Test glasses glasses-1")
        #expect(device.nameOrId() == "Test glasses glasses-1")
        #expect(device.compatibility() == .compatible)
        #expect(device.deviceType() == .simulated)
        withExtendedLifetime(token) {}
    }

    @Test("messages before hello are ignored")
    func beforeHello() throws {
        var behaviour = TestDevice.Behaviour()
        behaviour.answersHello = false
        let rig = try Rig(behaviour: behaviour)
        rig.connect()
        rig.device.deliver(.deviceState(DeviceState(batteryLevel: 3)))
        rig.device.deliver(.session(.started))
        rig.run()
        #expect(rig.wearables.devices.isEmpty)
    }

    @Test("a state listener gets the current state at once and every change")
    func stateListener() throws {
        let rig = try Rig()
        rig.connect()
        let device = try #require(rig.wearables.deviceForIdentifier("glasses-1"))
        let states = Recorder<DeviceState>()
        let links = Recorder<LinkState>()
        let tokens = ListenerTokenBag()
        device.addDeviceStateListener(states.callback).store(in: tokens)
        device.addLinkStateListener(links.callback).store(in: tokens)
        #expect(states.values == [device.state])
        #expect(links.values == [.connected])
        rig.device.report { $0.batteryLevel = 42; $0.chargingState = .charging }
        rig.device.report { $0.hingeState = .closed }
        rig.run()
        #expect(states.values.map(\.batteryLevel) == [100, 42, 100])
        #expect(states.values.map(\.hingeState) == [.open, .open, .closed])
        #expect(device.batteryLevel == 100 && device.hingeState == .closed)
        #expect(device.linkState == .connected)  // the host owns the link state, whatever the glasses report
        rig.device.drop()
        rig.run()
        #expect(links.values == [.connected, .disconnected])
        #expect(states.last?.linkState == .disconnected)
    }

    @Test("the device state stream starts with the current state")
    func deviceStateStream() async throws {
        let rig = try Rig()
        rig.connect()
        let device = try #require(rig.wearables.deviceForIdentifier("glasses-1"))
        let stream = device.deviceStateStream()
        rig.device.report { $0.batteryLevel = 50 }
        rig.run()
        var levels: [Int?] = []
        for await state in stream {
            levels.append(state.batteryLevel)
            if levels.count == 2 { break }
        }
        #expect(levels == [100, 50])
    }

    @Test("a new link from the same glasses reconnects the same Device")
    func reconnect() throws {
        let rig = try Rig()
        rig.connect()
        let device = try #require(rig.wearables.deviceForIdentifier("glasses-1"))
        rig.device.drop()
        rig.run()
        #expect(device.linkState == .disconnected)
        #expect(rig.wearables.devices == ["glasses-1"])  // still known
        #expect(rig.wearables.attachedLinkCount == 0)
        let link = rig.reconnect()
        #expect(rig.wearables.deviceForIdentifier("glasses-1") === device)
        #expect(device.linkState == .connected)
        #expect(rig.wearables.devices == ["glasses-1"])
        // The same link attached again is left as it is: when it drops, nothing stays counted.
        rig.wearables.attach(link: link)
        rig.run()
        #expect(rig.wearables.attachedLinkCount == 1)
        link.drop()
        rig.run()
        #expect(rig.wearables.attachedLinkCount == 0 && device.linkState == .disconnected)
    }

    @Test("a second live link from the same glasses replaces the first, which is closed")
    func duplicateLink() throws {
        let rig = try Rig()
        rig.connect()
        let second = rig.reconnect()
        #expect(rig.device.isClosed)
        #expect(!second.isClosed)
        let device = try #require(rig.wearables.deviceForIdentifier("glasses-1"))
        #expect(device.linkState == .connected)  // the old link's close does not disconnect the new one
    }

    @Test("glasses speaking another protocol version are known but not eligible")
    func incompatible() throws {
        let scheduler = ManualScheduler()
        let wearables = Wearables.makeInstance(configuration: try WearablesConfiguration(scheduler: scheduler))
        let glasses = TestDevice(scheduler: scheduler, protocolVersion: linkProtocolVersion + 1)
        wearables.attach(link: glasses)
        scheduler.runUntilIdle()
        let device = try #require(wearables.deviceForIdentifier("glasses-1"))
        #expect(device.compatibility() == .sdkUpdateRequired)
        #expect(AutoDeviceSelector(wearables: wearables).activeDevice == nil)
        let session = try wearables.createSession(deviceSelector: SpecificDeviceSelector(device: "glasses-1"))
        #expect(throws: DeviceSessionError.noEligibleDevice) { try session.start() }
    }

    @Test("AutoDeviceSelector follows connects and disconnects; its stream yields nil when none is eligible")
    func autoSelector() async throws {
        let rig = try Rig()
        let selector = AutoDeviceSelector(wearables: rig.wearables)
        #expect(selector.activeDevice == nil)
        let picks = Recorder<DeviceIdentifier?>()
        let stream = selector.activeDeviceStream()
        let consumer = Task {
            for await pick in stream {
                picks.record(pick)
                if picks.count == 4 { break }
            }
        }
        await eventually { picks.count == 1 }
        rig.connect()
        #expect(selector.activeDevice == "glasses-1")
        await eventually { picks.count == 2 }
        rig.device.drop()
        rig.run()
        #expect(selector.activeDevice == nil)
        await eventually { picks.count == 3 }
        _ = rig.reconnect()
        await consumer.value
        #expect(picks.values == [nil, "glasses-1", nil, "glasses-1"])
    }

    @Test("AutoDeviceSelector applies its filter and picks the first eligible glasses")
    func autoSelectorFilter() throws {
        let rig = try Rig()
        rig.connect()
        let second = TestDevice(id: "glasses-2", scheduler: rig.scheduler)
        rig.wearables.attach(link: second)
        rig.run()
        #expect(AutoDeviceSelector(wearables: rig.wearables).activeDevice == "glasses-1")
        let filtered = AutoDeviceSelector(wearables: rig.wearables, filter: { $0.identifier == "glasses-2" })
        #expect(filtered.activeDevice == "glasses-2")
        second.drop()
        rig.run()
        #expect(filtered.activeDevice == nil)
    }

    @Test("SpecificDeviceSelector always picks its device")
    func specificSelector() async {
        let selector = SpecificDeviceSelector(device: "abc")
        #expect(selector.activeDevice == "abc")
        var picks: [DeviceIdentifier?] = []
        for await pick in selector.activeDeviceStream() { picks.append(pick) }
        #expect(picks == ["abc"])
    }
}

@Suite("Permissions")
struct PermissionTests {
    @Test("no glasses known: noDevice")
    func noDevice() async throws {
        let rig = try Rig()
        await #expect(throws: PermissionError.noDevice) { try await rig.wearables.checkPermissionStatus(.camera) }
    }

    @Test("glasses known but disconnected: noDeviceWithConnection")
    func noConnection() async throws {
        let rig = try Rig()
        rig.connect()
        rig.device.drop()
        rig.run()
        await #expect(throws: PermissionError.noDeviceWithConnection) {
            try await rig.wearables.requestPermission(.camera)
        }
    }

    @Test("the glasses answer the silent query and the request over the link", arguments: [
        (PermissionStatus.granted, PermissionStatus.granted), (.denied, .granted), (.denied, .denied),
    ])
    func answers(check: PermissionStatus, request: PermissionStatus) async throws {
        var behaviour = TestDevice.Behaviour()
        behaviour.permissions[.camera] = check
        behaviour.requestAnswer = request
        let rig = try Rig(behaviour: behaviour)
        rig.connect()
        let checked = Task { try await rig.wearables.checkPermissionStatus(.camera) }
        await eventually { rig.device.sent.contains { if case .checkPermission(.camera, _) = $0 { true } else { false } } }
        rig.run()
        #expect(try await checked.value == check)
        let requested = Task { try await rig.wearables.requestPermission(.camera) }
        await eventually { rig.device.sent.contains { if case .requestPermission(.camera, _) = $0 { true } else { false } } }
        rig.run()
        #expect(try await requested.value == request)
    }

    @Test("granted on any glasses counts")
    func anyGlasses() async throws {
        var behaviour = TestDevice.Behaviour()
        behaviour.permissions[.camera] = .denied
        let rig = try Rig(behaviour: behaviour)
        rig.connect()
        let second = TestDevice(id: "glasses-2", scheduler: rig.scheduler)
        rig.wearables.attach(link: second)
        rig.run()
        let checked = Task { try await rig.wearables.checkPermissionStatus(.camera) }
        await eventually { second.sentCount { if case .checkPermission = $0 { true } else { false } } == 1 }
        rig.run()
        #expect(try await checked.value == .granted)
    }

    @Test("silent glasses: requestTimeout after the permission timeout; a second request meanwhile: requestInProgress")
    func timeout() async throws {
        var behaviour = TestDevice.Behaviour()
        behaviour.answersPermissions = false
        let rig = try Rig(behaviour: behaviour)
        rig.connect()
        let requested = Task { try await rig.wearables.requestPermission(.camera) }
        await eventually { rig.device.sentCount { if case .requestPermission = $0 { true } else { false } } == 1 }
        await #expect(throws: PermissionError.requestInProgress) { try await rig.wearables.requestPermission(.camera) }
        rig.scheduler.advance(by: .seconds(59))
        rig.run()
        rig.scheduler.advance(by: .seconds(1))
        await #expect(throws: PermissionError.requestTimeout) { try await requested.value }
    }

    @Test("the link drops before the answer: connectionError")
    func linkDrops() async throws {
        var behaviour = TestDevice.Behaviour()
        behaviour.answersPermissions = false
        let rig = try Rig(behaviour: behaviour)
        rig.connect()
        let checked = Task { try await rig.wearables.checkPermissionStatus(.microphone) }
        await eventually { rig.device.sentCount { if case .checkPermission = $0 { true } else { false } } == 1 }
        rig.device.drop()
        rig.run()
        await #expect(throws: PermissionError.connectionError) { try await checked.value }
    }
}
