"""The published update rules, written out in numpy (float64), one class per algorithm."""
from __future__ import annotations

import math

import numpy as np


class SGD:
    def __init__(self, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False):
        self.__dict__.update(locals())
        self.buf = None

    def step(self, x, g):
        g = -g if self.maximize else g
        g = g + self.weight_decay * x
        if self.momentum:
            self.buf = g.copy() if self.buf is None else self.momentum * self.buf + (1 - self.dampening) * g
            g = g + self.momentum * self.buf if self.nesterov else self.buf
        return x - self.lr * g


class Adam:
    def __init__(self, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, maximize=False,
                 decoupled=False):
        self.__dict__.update(locals())
        self.t, self.m, self.v, self.vmax = 0, 0.0, 0.0, 0.0

    def step(self, x, g):
        b1, b2 = self.betas
        g = -g if self.maximize else g
        if self.weight_decay:
            if self.decoupled:
                x = x * (1 - self.lr * self.weight_decay)
            else:
                g = g + self.weight_decay * x
        self.t += 1
        self.m = b1 * self.m + (1 - b1) * g
        self.v = b2 * self.v + (1 - b2) * g * g
        m_hat = self.m / (1 - b1 ** self.t)
        v = self.v
        if self.amsgrad:
            self.vmax = np.maximum(self.vmax, self.v)
            v = self.vmax
        v_hat = v / (1 - b2 ** self.t)
        return x - self.lr * m_hat / (np.sqrt(v_hat) + self.eps)


class Adamax:
    def __init__(self, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, maximize=False):
        self.__dict__.update(locals())
        self.t, self.m, self.u = 0, 0.0, 0.0

    def step(self, x, g):
        b1, b2 = self.betas
        g = -g if self.maximize else g
        g = g + self.weight_decay * x
        self.t += 1
        self.m = b1 * self.m + (1 - b1) * g
        self.u = np.maximum(b2 * self.u, np.abs(g) + self.eps)
        return x - self.lr / (1 - b1 ** self.t) * self.m / self.u


class NAdam:
    def __init__(self, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, maximize=False):
        self.__dict__.update(locals())
        self.t, self.m, self.v, self.mu_product = 0, 0.0, 0.0, 1.0

    def step(self, x, g):
        b1, b2 = self.betas
        g = -g if self.maximize else g
        if self.weight_decay:
            if self.decoupled_weight_decay:
                x = x * (1 - self.lr * self.weight_decay)
            else:
                g = g + self.weight_decay * x
        self.t += 1
        t, psi = self.t, self.momentum_decay
        mu = b1 * (1 - 0.5 * 0.96 ** (t * psi))
        mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * psi))
        self.mu_product *= mu
        self.m = b1 * self.m + (1 - b1) * g
        self.v = b2 * self.v + (1 - b2) * g * g
        d = np.sqrt(self.v / (1 - b2 ** t)) + self.eps
        return (x - self.lr * (1 - mu) / (1 - self.mu_product) * g / d
                - self.lr * mu_next / (1 - self.mu_product * mu_next) * self.m / d)


class RAdam:
    def __init__(self, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, decoupled_weight_decay=False,
                 maximize=False):
        self.__dict__.update(locals())
        self.t, self.m, self.v = 0, 0.0, 0.0

    def step(self, x, g):
        b1, b2 = self.betas
        g = -g if self.maximize else g
        if self.weight_decay:
            if self.decoupled_weight_decay:
                x = x * (1 - self.lr * self.weight_decay)
            else:
                g = g + self.weight_decay * x
        self.t += 1
        t = self.t
        self.m = b1 * self.m + (1 - b1) * g
        self.v = b2 * self.v + (1 - b2) * g * g
        m_hat = self.m / (1 - b1 ** t)
        rho_inf = 2 / (1 - b2) - 1
        rho_t = rho_inf - 2 * t * b2 ** t / (1 - b2 ** t)
        if rho_t > 5:
            r = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            return x - self.lr * m_hat * r * math.sqrt(1 - b2 ** t) / (np.sqrt(self.v) + self.eps)
        return x - self.lr * m_hat


class Adadelta:
    def __init__(self, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, maximize=False):
        self.__dict__.update(locals())
        self.v, self.u = 0.0, 0.0

    def step(self, x, g):
        g = -g if self.maximize else g
        g = g + self.weight_decay * x
        self.v = self.rho * self.v + (1 - self.rho) * g * g
        dx = np.sqrt(self.u + self.eps) / np.sqrt(self.v + self.eps) * g
        self.u = self.rho * self.u + (1 - self.rho) * dx * dx
        return x - self.lr * dx


class Adagrad:
    def __init__(self, lr=1e-2, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0, eps=1e-10,
                 maximize=False):
        self.__dict__.update(locals())
        self.t, self.s = 0, initial_accumulator_value

    def step(self, x, g):
        g = -g if self.maximize else g
        g = g + self.weight_decay * x
        self.t += 1
        clr = self.lr / (1 + (self.t - 1) * self.lr_decay)
        self.s = self.s + g * g
        return x - clr * g / (np.sqrt(self.s) + self.eps)


class RMSprop:
    def __init__(self, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False,
                 maximize=False):
        self.__dict__.update(locals())
        self.v, self.gbar, self.b = 0.0, 0.0, 0.0

    def step(self, x, g):
        g = -g if self.maximize else g
        g = g + self.weight_decay * x
        a = self.alpha
        self.v = a * self.v + (1 - a) * g * g
        if self.centered:
            self.gbar = a * self.gbar + (1 - a) * g
            d = np.sqrt(self.v - self.gbar ** 2) + self.eps
        else:
            d = np.sqrt(self.v) + self.eps
        if self.momentum > 0:
            self.b = self.momentum * self.b + g / d
            return x - self.lr * self.b
        return x - self.lr * g / d


class Rprop:
    def __init__(self, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), maximize=False):
        self.__dict__.update(locals())
        self.prev, self.eta = None, None

    def step(self, x, g):
        g = -g if self.maximize else g
        if self.prev is None:
            self.prev, self.eta = np.zeros_like(x), np.full_like(x, self.lr)
        s = g * self.prev
        lo, hi = self.step_sizes
        self.eta = np.where(s > 0, np.minimum(self.eta * self.etas[1], hi),
                            np.where(s < 0, np.maximum(self.eta * self.etas[0], lo), self.eta))
        g = np.where(s < 0, 0.0, g)
        self.prev = g
        return x - self.eta * np.sign(g)


class ASGD:
    def __init__(self, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.0, maximize=False):
        self.__dict__.update(locals())
        self.t, self.eta, self.mu, self.ax = 0, lr, 1.0, None

    def step(self, x, g):
        g = -g if self.maximize else g
        g = g + self.weight_decay * x
        self.t += 1
        x = x * (1 - self.lambd * self.eta) - self.eta * g
        self.ax = x.copy() if self.mu == 1 else self.ax + self.mu * (x - self.ax)
        self.eta = self.lr / (1 + self.lambd * self.lr * self.t) ** self.alpha
        self.mu = 1 / max(1, self.t - self.t0)
        return x


class Adafactor:
    def __init__(self, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, maximize=False):
        self.__dict__.update(locals())
        self.t, self.R, self.C, self.V = 0, 0.0, 0.0, 0.0

    @staticmethod
    def rms(a):
        return np.sqrt(np.mean(a * a))

    def step(self, x, g):
        g = -g if self.maximize else g
        eps1 = np.finfo(np.float64).eps if self.eps[0] is None else self.eps[0]
        self.t += 1
        w = self.t ** self.beta2_decay  # the weight of the new squared gradient, 1 - beta2_t
        alpha = max(self.eps[1], self.rms(x)) * min(self.lr, 1 / math.sqrt(self.t))
        x = x * (1 - self.lr * self.weight_decay)
        if g.ndim > 1:
            self.R = (1 - w) * self.R + w * np.mean(g * g, axis=-1, keepdims=True)
            self.C = (1 - w) * self.C + w * np.mean(g * g, axis=-2, keepdims=True)
            V = self.R @ self.C / np.maximum(np.mean(self.R, axis=-2, keepdims=True), eps1)
        else:
            self.V = (1 - w) * self.V + w * g * g
            V = self.V
        U = g / np.sqrt(np.maximum(V, eps1 * eps1))
        return x - alpha / max(1.0, self.rms(U) / self.d) * U
