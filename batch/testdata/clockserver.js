#!/usr/bin/env node
// clockserver.js is an MCP server over stdio (newline-delimited JSON-RPC)
// that reads the wall clock, for the tests of bench's pinned clock
// (docs/clock.md). Its one tool, events_now, puts the current time in a
// query to Central (an events window: the last hour) and in its result.
// Central is reached as real servers reach it: a token from the SSO host
// and the API host over TLS through HTTPS_PROXY, trusting only
// SSL_CERT_FILE, so the fake's certificates are checked against this
// process's clock.
'use strict';
const http = require('http');
const https = require('https');
const tls = require('tls');
const fs = require('fs');
const readline = require('readline');

const proxy = new URL(process.env.HTTPS_PROXY);
const ca = fs.readFileSync(process.env.SSL_CERT_FILE);

function request(method, host, path, headers, body) {
  return new Promise((resolve, reject) => {
    const c = http.request({ host: proxy.hostname, port: proxy.port, method: 'CONNECT', path: host + ':443' });
    c.on('error', reject);
    c.on('connect', (res, socket) => {
      if (res.statusCode !== 200) {
        reject(new Error('CONNECT ' + host + ': ' + res.statusCode));
        return;
      }
      const req = https.request({ method, host, path, headers,
        createConnection: () => tls.connect({ socket, servername: host, ca }) }, (resp) => {
        let data = '';
        resp.setEncoding('utf8');
        resp.on('data', (d) => { data += d; });
        resp.on('end', () => (resp.statusCode === 200 ? resolve(data) : reject(new Error(method + ' ' + path + ': ' + resp.statusCode + ' ' + data))));
      });
      req.on('error', reject);
      if (body) req.write(body);
      req.end();
    });
    c.end();
  });
}

async function eventsNow() {
  const now = new Date();
  const form = 'grant_type=client_credentials&client_id=clockserver&client_secret=x';
  const tok = JSON.parse(await request('POST', 'sso.common.cloud.hpe.com', '/as/token.oauth2',
    { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': Buffer.byteLength(form) }, form));
  const from = new Date(now.getTime() - 3600 * 1000);
  const q = 'context-type=SITE&context-identifier=2001&site-id=2001&start-at=' + encodeURIComponent(from.toISOString()) +
    '&end-at=' + encodeURIComponent(now.toISOString());
  const page = JSON.parse(await request('GET', 'apigw-uswest4.central.arubanetworks.com',
    '/network-troubleshooting/v1/events?' + q, { Authorization: 'Bearer ' + tok.access_token }));
  return JSON.stringify({ now: now.toISOString(), events: page.events.length });
}

function send(msg) { process.stdout.write(JSON.stringify(msg) + '\n'); }

readline.createInterface({ input: process.stdin }).on('line', async (line) => {
  let m;
  try { m = JSON.parse(line); } catch (e) { return; }
  if (m.id === undefined) return; // a notification
  switch (m.method) {
    case 'initialize':
      send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion,
        capabilities: { tools: {} }, serverInfo: { name: 'clockserver-node', version: '1' } } });
      break;
    case 'tools/list':
      send({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'events_now',
        description: 'List the events of the last hour at site HQ-Building-A.', inputSchema: { type: 'object' } }] } });
      break;
    case 'tools/call':
      try {
        send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: await eventsNow() }] } });
      } catch (e) {
        send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'error: ' + e.message }], isError: true } });
      }
      break;
    case 'ping':
      send({ jsonrpc: '2.0', id: m.id, result: {} });
      break;
    default:
      send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'no method ' + m.method } });
  }
});
