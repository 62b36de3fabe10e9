package fakecentral

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// expand generates the entities a Synth section asks for. It only depends on
// the fixture's seed and contents, so the same bundle expands identically on
// every machine.
func (f *Fixture) expand() {
	rng := rand.New(rand.NewPCG(uint64(f.Seed), 0x6661_6b65))
	siteIdx := map[string]int{}
	for i, s := range f.Sites {
		siteIdx[s.ID] = i
	}
	failReasons := []struct{ reason, stage string }{
		{"802.1X authentication failed: RADIUS reject", "Authentication"},
		{"DHCP timeout: no offer received", "DHCP"},
		{"Wrong PSK: 4-way handshake failed", "Association"},
		{"MAC authentication failed", "Authentication"},
	}
	oses := []string{"Windows 11", "macOS 15", "iOS 19", "Android 16", "ChromeOS", "Ubuntu 24.04"}
	vendors := []string{"Dell", "Apple", "Apple", "Samsung", "Google", "Lenovo"}
	bands := []struct{ band, channel string }{{"5 GHz", "36"}, {"5 GHz", "149"}, {"2.4 GHz", "6"}, {"6 GHz", "37"}}
	eventKinds := []struct{ code, name, cat, src string }{
		{"1001", "Client Connected", "Clients", "Wireless Client"},
		{"1002", "Client Authentication Failed", "Clients", "Wireless Client"},
		{"2001", "AP Radio Channel Changed", "RF", "Access Point"},
		{"3001", "Port Up", "Interfaces", "Switch"},
		{"4001", "Gateway Uplink Changed", "WAN", "Gateway"},
	}
	for si, ss := range f.Synth.Sites {
		site := f.Sites[siteIdx[ss.Site]]
		code := site.Code
		if code == "" {
			code = fmt.Sprintf("S%d", si)
		}
		base := 10 + si
		var aps, sws, gws []string
		for i := 1; i <= ss.APs; i++ {
			d := Device{
				Serial: fmt.Sprintf("CNA%s%04d", code, i), Name: fmt.Sprintf("AP-%s-%03d", code, i),
				Type: "ACCESS_POINT", Model: "AP-635", PartNumber: "R7J27A",
				MAC: fmt.Sprintf("20:4c:03:%02x:%02x:%02x", base, i/256, i%256), Site: site.ID,
				Status: "ONLINE", Firmware: ss.APFirmware, IPv4: fmt.Sprintf("10.%d.10.%d", base, i),
				Deployment: "Cluster", Cluster: site.Name + "-cluster", CPU: 5 + rng.IntN(40), Memory: 20 + rng.IntN(50),
				Power: 12 + float64(rng.IntN(80))/10, UptimeSec: int64(86400 * (1 + rng.IntN(60))), Function: "Campus AP",
			}
			if ss.OfflineAPEvery > 0 && i%ss.OfflineAPEvery == 0 {
				d.Status = "OFFLINE"
				d.RebootReason = "Power loss"
			}
			f.Devices = append(f.Devices, d)
			aps = append(aps, d.Serial)
			if ss.RecommendedAP != "" && ss.RecommendedAP != d.Firmware {
				f.Firmware = append(f.Firmware, Firmware{Serial: d.Serial, Recommended: ss.RecommendedAP, Classification: "Upgrade Recommended", UpgradeStatus: "Not Started"})
			}
		}
		for i := 1; i <= ss.Switches; i++ {
			d := Device{
				Serial: fmt.Sprintf("CNS%s%03d", code, i), Name: fmt.Sprintf("SW-%s-%02d", code, i),
				Type: "SWITCH", Model: "6300M 48G", PartNumber: "JL662A",
				MAC: fmt.Sprintf("88:3a:30:%02x:00:%02x", base, i), Site: site.ID, Status: "ONLINE",
				Firmware: ss.SwitchFirmware, IPv4: fmt.Sprintf("10.%d.1.%d", base, i), Role: "Access", Deployment: "Standalone",
				CPU: 3 + rng.IntN(20), Memory: 30 + rng.IntN(30), UptimeSec: int64(86400 * (10 + rng.IntN(90))), Function: "Access Switch",
			}
			f.Devices = append(f.Devices, d)
			sws = append(sws, d.Serial)
		}
		for i := 1; i <= ss.Gateways; i++ {
			gws = append(gws, fmt.Sprintf("CNG%s%02d", code, i))
			f.Devices = append(f.Devices, Device{
				Serial: fmt.Sprintf("CNG%s%02d", code, i), Name: fmt.Sprintf("GW-%s-%02d", code, i),
				Type: "GATEWAY", Model: "9240", PartNumber: "R8T52A",
				MAC: fmt.Sprintf("00:1a:1e:%02x:00:%02x", base, i), Site: site.ID, Status: "ONLINE",
				Firmware: ss.GatewayFirmware, IPv4: fmt.Sprintf("10.%d.0.%d", base, i), Function: "Branch Gateway", Role: "Leader",
				Deployment: "Cluster", Cluster: site.Name + "-gw", CPU: 10 + rng.IntN(30), Memory: 30 + rng.IntN(40),
				UptimeSec: int64(86400 * (5 + rng.IntN(30))),
				Tunnels:   []Tunnel{{Name: fmt.Sprintf("%s-to-dc", code), Type: "WAN", Status: "Up", Peer: "VPNC-DC-01", Source: fmt.Sprintf("198.51.%d.2", base), Dest: "203.0.113.10", Uplink: "wan1"}},
			})
		}
		n := 0
		addClient := func(c Client) {
			n++
			if ss.FailEvery > 0 && n%ss.FailEvery == 0 {
				fr := failReasons[rng.IntN(len(failReasons))]
				c.Status, c.FailureReason, c.FailureStage, c.IPv4 = "Failed", fr.reason, fr.stage, ""
				src := "Wireless Client"
				if c.Type == "Wired" {
					src = "Wired Client"
				}
				f.Events = append(f.Events, Event{
					ID: fmt.Sprintf("EV-%s-F%04d", code, n), Code: "1002", Name: "Client Onboarding Failed", Category: "Clients",
					SourceType: src, Serial: c.Device, Site: site.ID, ClientMAC: c.MAC, Time: fmt.Sprintf("-%dm", 1+n%170),
					Description: fmt.Sprintf("%s (%s) failed at %s: %s", c.MAC, c.Name, fr.stage, fr.reason), Reason: fr.reason, Severity: "negative",
				})
			}
			f.Clients = append(f.Clients, c)
		}
		for ai, ap := range aps {
			for k := 0; k < ss.WirelessPerAP; k++ {
				oi := rng.IntN(len(oses))
				b := bands[rng.IntN(len(bands))]
				wlan := ""
				if len(f.Synth.WLANs) > 0 {
					wlan = f.Synth.WLANs[(ai+k)%len(f.Synth.WLANs)]
				}
				id := len(f.Clients) + 1
				addClient(Client{
					MAC:  fmt.Sprintf("6c:%02x:%02x:%02x:%02x:%02x", base, ai/256, ai%256, k, id%256),
					Name: fmt.Sprintf("%s-user%04d", code, id), HostName: fmt.Sprintf("%s-host-%04d", code, id),
					OS: oses[oi], Vendor: vendors[oi], Category: "Computer", Type: "Wireless", Status: "Connected",
					Device: ap, WLAN: wlan, VLAN: fmt.Sprintf("%d", 100+(ai+k)%4), Band: b.band, Channel: b.channel,
					IPv4: fmt.Sprintf("10.%d.%d.%d", 100+si, 100+ai%100, 10+k), User: fmt.Sprintf("user%04d@campus.example", id),
					Auth: "802.1X", Role: "employee", SNR: 18 + rng.IntN(30),
					ConnectedAt: (-time.Duration(1+rng.IntN(600)) * time.Minute).String(),
				})
			}
		}
		for swi, sw := range sws {
			for k := 0; k < ss.WiredPerSwitch; k++ {
				id := len(f.Clients) + 1
				addClient(Client{
					MAC:  fmt.Sprintf("3c:%02x:%02x:00:%02x:%02x", base, swi, k, id%256),
					Name: fmt.Sprintf("%s-desk%04d", code, id), HostName: fmt.Sprintf("%s-desk-%04d", code, id),
					OS: "Windows 11", Vendor: "Dell", Category: "Computer", Type: "Wired", Status: "Connected",
					Device: sw, VLAN: "20", Port: fmt.Sprintf("1/1/%d", k+1), IPv4: fmt.Sprintf("10.%d.20.%d", 100+si, 10+swi*50+k),
					Auth: "MAC", Role: "wired-employee",
					ConnectedAt: (-time.Duration(1+rng.IntN(900)) * time.Minute).String(),
				})
			}
		}
		for k := 0; k < ss.Events; k++ {
			ek := eventKinds[k%len(eventKinds)]
			serial := ""
			switch ek.src {
			case "Access Point", "Wireless Client":
				if len(aps) > 0 {
					serial = aps[k%len(aps)]
				}
			case "Switch":
				if len(sws) > 0 {
					serial = sws[k%len(sws)]
				}
			case "Gateway":
				if len(gws) > 0 {
					serial = gws[k%len(gws)]
				}
			}
			sev := "neutral"
			if ek.code == "1002" {
				sev = "negative"
			}
			f.Events = append(f.Events, Event{
				ID: fmt.Sprintf("EV-%s-%04d", code, k+1), Code: ek.code, Name: ek.name, Category: ek.cat,
				SourceType: ek.src, Serial: serial, Site: site.ID,
				Time: (-time.Duration(k*7+1) * time.Minute).String(), Description: ek.name + " on " + site.Name, Severity: sev,
			})
		}
	}
}
