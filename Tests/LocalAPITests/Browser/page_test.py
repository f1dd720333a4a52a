#!/usr/bin/env python3
"""Drives the daemon's page in headless Chromium (selenium + chromedriver), as a person would.

Usage: page_test.py URL_A TOKEN_A URL_B TOKEN_B SCREENSHOT_DIR

Opens device A's page with its token, sees a document that device B makes appear in the list
without a reload, opens it, types into the editor and waits until B's API has the text; then
sees the latency plot of the peer's edit, and checks that the page, without the token, shows
only the login form. Saves screenshots.
Exit 0 when all of that happened, 1 with a message otherwise, 77 when selenium is missing.
"""
import json
import os
import sys
import time
import urllib.request

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:
    print("selenium is not installed (python3 -m pip install selenium)")
    sys.exit(77)

url_a, token_a, url_b, token_b, shots = sys.argv[1:6]
BOUND = 30  # seconds any one wait may take before the test fails


def api(url, token, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url + path, data=data, method=method)
    request.add_header("Authorization", "Bearer " + token)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=BOUND) as response:
        text = response.read().decode()
        return json.loads(text) if text else None


def shot(driver, name):
    path = os.path.join(shots, name)
    driver.save_screenshot(path)
    print("screenshot:", path)


options = webdriver.ChromeOptions()
for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1000,800"]:
    options.add_argument(argument)
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
# The list is drawn again on every change: an element found a moment ago may be gone.
wait = WebDriverWait(driver, BOUND, poll_frequency=0.02, ignored_exceptions=[StaleElementReferenceException])


def click(selector):
    def attempt(d):
        d.find_element(By.CSS_SELECTOR, selector).click()
        return True
    wait.until(attempt)
try:
    driver.get(url_a + "/?token=" + token_a)
    wait.until(lambda d: d.find_element(By.ID, "feed").text == "live")
    assert "token" not in driver.current_url, "the token stays in the address bar: " + driver.current_url

    made = api(url_b, token_b, "POST", "/api/documents", {"name": "MadeOnB"})
    row = f'tr[data-id="{made["id"]}"]'
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, row))
    print("the peer's new document appeared without a reload")
    wait.until(lambda d: d.find_element(By.CSS_SELECTOR, row + " td:nth-child(4)").text == "yes")
    shot(driver, "master.png")

    click(row)
    editor = driver.find_element(By.ID, "editor")
    wait.until(lambda d: editor.get_attribute("value") != "")
    editor.send_keys(Keys.END, " typed in the browser")
    wait.until(lambda d: d.find_element(By.ID, "saved").text == "saved")
    deadline = time.monotonic() + BOUND
    while "typed in the browser" not in api(url_b, token_b, "GET", f"/api/documents/{made['id']}/text")["text"]:
        if time.monotonic() > deadline:
            raise AssertionError("the typed text did not reach device B")
        time.sleep(0.02)
    print("the text typed in the browser reached the other device")

    api(url_b, token_b, "POST", f"/api/documents/{made['id']}/edits", {"kind": "insert", "at": 0, "text": "B says hi. "})
    wait.until(lambda d: editor.get_attribute("value").startswith("B says hi. "))
    print("the peer's edit appeared in the open editor")
    shot(driver, "detail.png")

    # B's edit was imported while A's detail was open on it: a latency sample, drawn on the list.
    driver.find_element(By.ID, "back").click()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#plot svg"))
    print("the latency plot shows the peer's edit")
    shot(driver, "latencies.png")

    driver.delete_all_cookies()
    driver.get(url_a + "/")
    wait.until(lambda d: d.find_elements(By.ID, "token"))
    assert not driver.find_elements(By.ID, "documents"), "the page showed documents without the token"
    shot(driver, "login.png")
    print("without the token the page asks for it")
except Exception as error:  # report, keep a screenshot, fail
    try:
        shot(driver, "failure.png")
    except Exception:
        pass
    print("FAILED:", repr(error))
    sys.exit(1)
finally:
    driver.quit()
