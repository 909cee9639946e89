"""The board in a real browser, over the Chrome DevTools Protocol (run by scripts/browser-test)."""
import asyncio, base64, json, os, re, shutil, time, urllib.request, uuid
from datetime import datetime, timedelta, timezone

import websockets

BASE, OUT = os.environ["BASE"], os.environ["OUT"]
KEYS = {"pos": os.environ["POS"], "barista": os.environ["BARISTA"], "dashboard": os.environ["DASH"], "app": os.environ["APP"]}
DEADLINE = 30  # seconds; generous, nothing passes or fails on timing
QUIET = 5      # seconds a stopped board is watched for requests (the old page retried every 3 s, a transient retry waits 2 s)
STORE = "market-st"


def api(method, path, role, body=None):
    request = urllib.request.Request(BASE + path, method=method, data=json.dumps(body).encode() if body else None, headers={
        "Authorization": "Bearer " + KEYS[role], "Content-Type": "application/json", "Idempotency-Key": str(uuid.uuid4())})
    with urllib.request.urlopen(request) as response:
        return json.loads(response.read() or b"{}")


def eta(minutes):
    return (datetime.now(timezone.utc) + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def place(name, items, minutes, locale="en", **extra):
    return api("POST", "/v1/orders", "pos", {"store_id": STORE, "pos_ref": "T-" + uuid.uuid4().hex[:6], "display_name": name,
                                             "locale": locale, "items": items, "eta": eta(minutes), **extra})["id"]


def event(oid, body):
    return api("POST", f"/v1/orders/{oid}/events", "pos" if body["type"] in ("picked_up", "canceled", "delayed") else "barista", body)


class Page:
    def __init__(self, socket):
        self.socket, self.next = socket, 0

    async def send(self, method, **params):
        self.next += 1
        ident = self.next
        await self.socket.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(await self.socket.recv())
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    async def eval(self, expression):
        result = await self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    async def wait(self, expression, what):
        end = time.monotonic() + DEADLINE
        while time.monotonic() < end:
            if await self.eval(expression):
                return
            await asyncio.sleep(0.1)
        seen = await self.eval('JSON.stringify({url: location.href, state: document.body?.dataset.boardState, '
                               'notice: document.querySelector("#notice")?.textContent, status: document.querySelector("#status")?.textContent})')
        raise AssertionError(f"timed out waiting for {what} (the page: {seen})")

    async def screenshot(self, name):
        data = (await self.send("Page.captureScreenshot", format="png"))["data"]
        path = os.path.join(OUT, name)
        with open(path, "wb") as file:
            file.write(base64.b64decode(data))
        print("saved", path)
        return path

    async def visible(self, selector):
        return await self.eval(f'(() => {{ const e = document.querySelector({json.dumps(selector)}); '
                               f'return e !== null && getComputedStyle(e).display !== "none" && e.getClientRects().length > 0; }})()')

    async def text(self, selector):
        return await self.eval(f'document.querySelector({json.dumps(selector)})?.textContent ?? null')

    async def open_board(self, store, key):
        # A new document each time (the same address with another fragment would not load the page again).
        await self.send("Page.navigate", url="about:blank")
        await self.wait('location.href === "about:blank"', "a blank page")
        await self.send("Page.navigate", url=f"{BASE}/?store={store}#key={key}")
        # A new document: the old one's state attribute is gone once the navigation committed.
        await self.wait(f'location.search === "?store={store}" && document.body?.dataset.boardState !== undefined', "the page to load")


def card(oid, state=None):
    scope = f'section[data-state="{state}"] ' if state else ""
    return f'{scope}article[data-order-id="{oid}"]'


async def check_stopped(page, store, key, says):
    """The page says why it cannot open, shows the form again and asks for no more tickets."""
    await page.open_board(store, key)
    await page.wait('document.body.dataset.boardState === "stopped"', f"the board to stop ({says})")
    notice = await page.text("#notice")
    assert says in notice, f"the notice says {notice!r}, expected {says!r}"
    assert await page.visible("#login"), "the form must be back to correct the store or key"
    assert not await page.visible("#board"), "the board must be gone with a refused key or unknown store"
    await asyncio.sleep(QUIET)
    tickets = await page.eval('performance.getEntriesByType("resource").filter(e => e.name.includes("/v1/stream/tickets")).length')
    assert tickets == 1, f"{tickets} ticket requests in {QUIET} s: the page retries what will not change"
    assert await page.eval('document.body.dataset.boardState') == "stopped"


async def main():
    api("PUT", f"/v1/stores/{STORE}", "pos", {"name": "Market St", "timezone": "America/Los_Angeles"})
    # The store's pickup board on a broadcast channel (the built-in simulator answers the channel API).
    api("PUT", f"/v1/stores/{STORE}/broadcast", "pos", {"storage": "none"})

    # A busy morning: one order followed through (with a customer's phone registered, so there are deliveries), one
    # late, one delayed with a reason, one being made late, one ready, more to be picked up and one canceled.
    api("PUT", "/v1/customers/c-browser/tokens/alert/" + "8f2a61c0" * 8, "app", {"environment": "production"})
    oid = place("Ana", [{"name": "Oat latte", "size": "grande", "quantity": 1, "modifiers": ["oat milk", "extra shot"]},
                        {"name": "Almond croissant", "quantity": 2}], 6, locale="es", customer_ref="c-browser")
    api("PUT", f"/v1/orders/{oid}/live-activity-token", "app", {"token": "5c0e7d2a" * 12, "environment": "sandbox"})
    late = place("Ben", [{"name": "Flat white", "quantity": 1}], -3)
    delayed = place("Chloé", [{"name": "Cappuccino", "size": "tall", "quantity": 1, "modifiers": ["cinnamon"]}], 4, locale="fr")
    event(delayed, {"type": "started", "barista": "Lee"})
    reason = "Waiting for the oat milk delivery"
    event(delayed, {"type": "delayed", "eta": eta(12), "reason": reason})
    place("Dev", [{"name": "Espresso", "quantity": 2}, {"name": "Americano", "size": "grande", "quantity": 1}], 8)
    making_late = place("Emi", [{"name": "Matcha latte", "size": "venti", "quantity": 1, "modifiers": ["almond milk"]}], -1, locale="ja")
    event(making_late, {"type": "started", "barista": "Sam"})
    ready = place("Farid", [{"name": "Mocha", "size": "short", "quantity": 1, "modifiers": ["no whip"]}], 2)
    event(ready, {"type": "started", "barista": "Lee"})
    event(ready, {"type": "ready", "pickup_point": "window"})
    later = [place(name, [{"name": "Drip coffee", "size": "grande", "quantity": 1}], 5)
             for name in ["Gus", "Hana", "Ivo", "Jun", "Kai", "Lou", "Max"]]
    canceled = place("Noor", [{"name": "Chai latte", "quantity": 1}], 5)

    port = os.environ["DEVTOOLS_PORT"]
    targets = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list").read())
    page_target = next(t for t in targets if t["type"] == "page")
    async with websockets.connect(page_target["webSocketDebuggerUrl"], max_size=None) as socket:
        page = Page(socket)
        await page.send("Page.enable")
        await page.send("Runtime.enable")
        # A wall screen's shape.
        await page.send("Emulation.setDeviceMetricsOverride", width=1600, height=900, deviceScaleFactor=1, mobile=False)
        await page.open_board(STORE, KEYS["dashboard"])
        await page.wait(f'document.querySelector(\'{card(oid, "queued")}\') !== null', "the card in the queued column")
        await page.wait('document.querySelector("#status").dataset.connected === "true"', "the stream to connect")
        assert await page.eval('location.hash') == "", "the key must leave the address bar"
        assert not await page.visible("#login"), "the login form must be gone once the board is open"
        assert await page.visible("#board")
        await page.screenshot("board-queued.png")

        # Each card: waiting time, ETA, items with size and modifiers.
        waiting = await page.text(f'{card(oid)} [data-field="waiting"]')
        assert re.fullmatch(r"\d+:\d\d", waiting), f"waiting time {waiting!r}"
        due = await page.text(f'{card(oid)} [data-field="eta"]')
        assert due.startswith("due ") and " in " in due, f"ETA {due!r}"
        items = await page.text(f'{card(oid)} [data-field="items"]')
        assert "1× Oat latte · grande · oat milk, extra shot" in items and "2× Almond croissant" in items, f"items {items!r}"
        # Late (ETA passed, not ready) stands out; delayed says why; neither where it is not so.
        for late_id in [late, making_late]:
            assert await page.eval(f'document.querySelector(\'{card(late_id)}\').dataset.late') == "true", "a late order is not marked"
            assert await page.visible(f'{card(late_id)} [data-field="late"]'), "the late flag is not shown"
        assert await page.eval(f'document.querySelector(\'{card(oid)}\').dataset.late') == "false"
        assert not await page.visible(f'{card(oid)} [data-field="late"]'), "an order on time is flagged late"
        assert await page.text(f'{card(delayed, "preparing")} [data-field="delay-reason"]') == "Delayed: " + reason
        assert await page.eval(f'document.querySelector(\'{card(oid)} [data-field="delay-reason"]\') === null')
        assert (await page.text("#late-count")) == "2 late"
        # The barista on a card being made, the pickup point on a ready one.
        assert await page.text(f'{card(making_late, "preparing")} [data-field="barista"]') == "by Sam"
        assert await page.text(f'{card(ready, "ready")} [data-field="pickup-point"]') == "pick up at window"

        event(oid, {"type": "started", "barista": "Sam"})
        await page.wait(f'document.querySelector(\'{card(oid, "preparing")}\') !== null', "the card to move to preparing")
        assert await page.eval(f'document.querySelector(\'{card(oid, "queued")}\') === null'), "the card must leave the queued column"
        assert await page.text(f'{card(oid)} [data-field="barista"]') == "by Sam"

        await page.eval(f'document.querySelector(\'{card(oid, "preparing")}\').click()')
        projection = api("GET", f"/v1/orders/{oid}", "dashboard")["projection"]
        title = json.dumps(projection["lockScreen"]["title"])
        await page.wait(f'[...document.querySelectorAll(\'[data-preview="lock-screen"] [data-field="lock-title"]\')]'
                        f'.map(e => e.textContent).join("|") === [{title}, {title}].join("|")', "lock screen previews (light and dark)")
        for preview in ["compact", "minimal", "expanded", "lock-screen", "watch", "carplay"]:
            count = await page.eval(f'document.querySelectorAll(\'[data-preview="{preview}"]\').length')
            assert count == 2, f"{preview}: {count} previews, expected light and dark"
        status = json.dumps(projection["small"]["status"])
        assert await page.eval(f'document.querySelector(\'[data-field="small-status"]\').textContent === {status}'), "small status"

        # Ready while the details are open: the previews follow, and so do the history and the deliveries.
        event(oid, {"type": "ready", "pickup_point": "counter"})
        ready_title = json.dumps(api("GET", f"/v1/orders/{oid}", "dashboard")["projection"]["lockScreen"]["title"])
        await page.wait(f'document.querySelector(\'[data-field="lock-title"]\').textContent === {ready_title}', "previews to show ready")
        await page.wait('[...document.querySelectorAll(\'[data-section="history"] tr[data-event]\')].map(e => e.dataset.event).join() '
                        '=== "placed,started,ready"', "the history to show placed, started, ready")
        settled = lambda log: log and not any(d["state"] in ("pending", "inflight") for d in log)
        end = time.monotonic() + DEADLINE
        while not settled(log := api("GET", f"/v1/orders/{oid}/deliveries", "dashboard")["deliveries"]):
            assert time.monotonic() < end, "the deliveries were not sent"
            await asyncio.sleep(0.2)
        states = json.dumps(",".join(d["state"] for d in log))
        await page.wait(f'[...document.querySelectorAll(\'[data-section="deliveries"] tr[data-delivery-state]\')]'
                        f'.map(e => e.dataset.deliveryState).join() === {states}', "the deliveries as the API lists them")
        sent = next(d for d in log if d["state"] == "sent" and d["order_event"] == "ready")
        row = f'[data-section="deliveries"] tr[data-reason-code="{sent["reason_code"]}"]'
        assert await page.text(f'{row} [data-field="reason"]') == sent["reason"], "the delivery's reason"
        assert f"APNs {sent['apns_status']}" in await page.text(f'{row} [data-field="apns"]'), "the delivery's APNs answer"
        skipped = next(d for d in log if d["state"] == "skipped")
        assert skipped["reason"] in await page.text(f'[data-section="deliveries"] tr[data-reason-code="{skipped["reason_code"]}"]')

        # The pickup board customers' phones show, as the store's broadcast carries it.
        board = json.dumps(api("GET", f"/v1/stores/{STORE}/broadcast", "dashboard")["content_state"]["lockScreen"]["title"])
        await page.wait(f'document.querySelector(\'#broadcast [data-field="broadcast-title"]\')?.textContent === {board}',
                        "the pickup board to show the broadcast's title")
        broadcast = await page.text("#broadcast")
        assert "null" not in broadcast and "channel" not in broadcast, f"the broadcast line speaks jargon: {broadcast!r}"

        # Did the phones get them: the store's funnel for the last hour, as the API counts it, one line per kind of push.
        since = (datetime.now(timezone.utc) - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        updates = next(p for p in api("GET", f"/v1/stores/{STORE}/funnel?since={since}", "dashboard")["push_types"]
                       if p["push_type"] == "liveactivity" and p["event"] == "update")
        line = '#funnel [data-push="liveactivity/update"]'
        await page.wait(f'document.querySelector(\'{line}\')?.textContent.includes("{updates["sent"]} sent · {updates["accepted"]} taken by Apple")',
                        "the funnel to count the activity's updates as the API does")
        funnel = await page.text("#funnel")
        assert "null" not in funnel and "undefined" not in funnel and "liveactivity" not in funnel, f"the funnel speaks jargon: {funnel!r}"
        # The whole sheet in one picture: the viewport as tall as the sheet for a moment.
        height = await page.eval('Math.ceil(document.querySelector("#details .sheet").getBoundingClientRect().height) + 60')
        await page.send("Emulation.setDeviceMetricsOverride", width=1600, height=max(900, height), deviceScaleFactor=1, mobile=False)
        shot = await page.screenshot("board-previews.png")
        await page.send("Emulation.setDeviceMetricsOverride", width=1600, height=900, deviceScaleFactor=1, mobile=False)
        if os.environ.get("UPDATE_DOCS"):
            shutil.copy(shot, "docs/dashboard.png")
        await page.eval('document.querySelector("#details .close").click()')
        assert await page.text(f'{card(oid, "ready")} [data-field="pickup-point"]') == "pick up at counter"

        # Finished orders: the last few, with a count.
        for other in later:
            event(other, {"type": "started", "barista": "Lee"})
            event(other, {"type": "ready", "pickup_point": "counter"})
            event(other, {"type": "picked_up"})
        event(canceled, {"type": "canceled", "reason": "Customer left"})
        await page.wait(f'document.querySelector(\'section[data-state="picked_up"] [data-field="count"]\').textContent === "{len(later)}"',
                        "the picked-up count")
        await page.wait(f'document.querySelector(\'{card(canceled, "canceled")}\') !== null', "the canceled card")
        shown = await page.eval('document.querySelectorAll(\'section[data-state="picked_up"] article\').length')
        assert shown == 5, f"{shown} picked-up cards, expected the last 5"
        assert await page.eval(f'document.querySelector(\'{card(later[-1], "picked_up")}\') !== null'), "the last one picked up is shown"
        assert await page.eval(f'document.querySelector(\'{card(later[0])}\') === null'), "the first one picked up is only counted"
        width = await page.eval('document.querySelector(\'section[data-state="picked_up"]\').getBoundingClientRect().width / innerWidth')
        assert width < 0.2, f"the finished orders take {width:.0%} of the width"
        # The moved cards' flash (a CSS animation) ends before the pictures: waited for, not slept on.
        await page.wait('document.getAnimations().length === 0', "the moved cards' flash to end")
        light = await page.screenshot("board-light.png")
        await page.send("Emulation.setEmulatedMedia", features=[{"name": "prefers-color-scheme", "value": "dark"}])
        assert await page.eval('matchMedia("(prefers-color-scheme: dark)").matches')
        dark = await page.screenshot("board-dark.png")
        if os.environ.get("UPDATE_DOCS"):
            shutil.copy(light, "docs/board-light.png")
            shutil.copy(dark, "docs/board-dark.png")
        await page.send("Emulation.setEmulatedMedia", features=[])

        # A failure that may pass (here the network refusing the ticket request) is retried, not a reason to stop.
        await page.send("Network.enable")
        await page.send("Network.setBlockedURLs", urls=["*/v1/stream/tickets*"])
        await page.open_board(STORE, KEYS["dashboard"])
        await page.wait('document.body.dataset.boardState === "reconnecting"', "the page to say it retries")
        assert await page.visible("#board") and not await page.visible("#login"), "a network failure must not close the board"
        await page.send("Network.setBlockedURLs", urls=[])
        await page.wait('document.body.dataset.boardState === "live"', "the retry to open the board")
        await page.wait(f'document.querySelector(\'{card(oid, "ready")}\') !== null', "the board after the retry")
        await page.send("Network.disable")

        # An unknown store and a refused key: said plainly, and no retry loop.
        await check_stopped(page, "no-such-store", KEYS["dashboard"], "There is no store “no-such-store” here.")
        await check_stopped(page, STORE, "not-a-key", "This key was refused.")
        await page.screenshot("board-refused.png")
        # The right key pasted into the same tab changes only the fragment: the page opens again without a reload.
        await page.eval(f'location.hash = "#key={KEYS["dashboard"]}"')
        await page.wait('document.body.dataset.boardState === "live"', "the board to open with the right key")
        await page.wait(f'document.querySelector(\'{card(oid, "ready")}\') !== null', "the board with the right key")
        assert not await page.visible("#login") and not await page.visible("#notice"), "the refusal must go with the right key"
        assert await page.eval('location.hash') == ""
    print("browser test passed: the cards show waiting time, ETA, items, barista and pickup point, late and delayed orders "
          "stand out, finished columns stay compact, the details show history, deliveries and previews, the pickup board "
          "its broadcast, a network failure is retried, and an unknown store or refused key stops the page")


asyncio.run(main())
