// SPDX-License-Identifier: MIT
// Protocol-v2 positions for the local chain (ACCOUNTS.md §5, §6, §11): the PositionManager
// (ERC-1155 positions; only its Router mints and burns) and the Router, whose
// `redeem(bytes31 conditionId, uint256 outcomeIndex, uint256 amount)` burns a resolved
// position and pays pUSD. A position id is the condition's 31 bytes followed by the outcome
// byte (as the official SDK decodes it). Split and payouts stand in for Polymarket's own
// modules and resolution, which we do not know: pUSD in for a split, the deployer (the dev
// oracle) reports payouts.
pragma solidity ^0.8.24;

import {DevToken} from "./DevToken.sol";
import {ERC1155Balances} from "./ERC1155Balances.sol";

contract PositionManager is ERC1155Balances {
    address public immutable admin;
    address public router;

    constructor() {
        admin = msg.sender;
    }

    function setRouter(address router_) external {
        require(msg.sender == admin && router == address(0), "PositionManager: router is set");
        router = router_;
    }

    function safeTransferFrom(address from, address to, uint256 id, uint256 value, bytes calldata) external {
        require(to != address(0), "ERC1155: target address must be non-zero");
        require(from == msg.sender || isApprovedForAll(from, msg.sender), "ERC1155: need operator approval");
        require(_balances[id][from] >= value, "ERC1155: insufficient balance");
        _balances[id][from] -= value;
        _balances[id][to] += value;
        emit TransferSingle(msg.sender, from, to, id, value);
    }

    function mint(address to, uint256 id, uint256 value) external {
        require(msg.sender == router, "PositionManager: only the router");
        _balances[id][to] += value;
        emit TransferSingle(msg.sender, address(0), to, id, value);
    }

    /// The router burns a holder's position only as the holder's approved operator.
    function burn(address from, uint256 id, uint256 value) external {
        require(msg.sender == router, "PositionManager: only the router");
        require(isApprovedForAll(from, msg.sender), "ERC1155: need operator approval");
        require(_balances[id][from] >= value, "ERC1155: insufficient balance");
        _balances[id][from] -= value;
        emit TransferSingle(msg.sender, from, address(0), id, value);
    }
}

contract ProtocolV2Router {
    event PositionSplit(address indexed holder, bytes31 indexed conditionId, uint256 amount);
    event PayoutsReported(bytes31 indexed conditionId, uint256[2] payouts);
    event PositionRedeemed(address indexed holder, bytes31 indexed conditionId, uint256 outcomeIndex, uint256 amount, uint256 payout);

    PositionManager public immutable positions;
    DevToken public immutable pusd;
    address public immutable oracle;
    mapping(bytes31 => uint256[2]) private _numerators;
    mapping(bytes31 => uint256) public payoutDenominator;

    constructor(address positions_, address pusd_) {
        positions = PositionManager(positions_);
        pusd = DevToken(pusd_);
        oracle = msg.sender;
    }

    function positionId(bytes31 conditionId, uint256 outcomeIndex) public pure returns (uint256) {
        require(outcomeIndex < 2, "Router: outcome index must be 0 or 1");
        return (uint256(uint248(conditionId)) << 8) | outcomeIndex;
    }

    /// pUSD in (the caller approved this router), both outcomes' positions out.
    function split(bytes31 conditionId, uint256 amount) external {
        require(pusd.transferFrom(msg.sender, address(this), amount), "Router: transfer failed");
        positions.mint(msg.sender, positionId(conditionId, 0), amount);
        positions.mint(msg.sender, positionId(conditionId, 1), amount);
        emit PositionSplit(msg.sender, conditionId, amount);
    }

    function reportPayouts(bytes31 conditionId, uint256[2] calldata payouts) external {
        require(msg.sender == oracle, "Router: only the oracle");
        require(payoutDenominator[conditionId] == 0, "Router: already resolved");
        uint256 denominator = payouts[0] + payouts[1];
        require(denominator > 0, "Router: payouts are all zero");
        _numerators[conditionId] = payouts;
        payoutDenominator[conditionId] = denominator;
        emit PayoutsReported(conditionId, payouts);
    }

    /// Burn `amount` of a resolved position (the caller approved this router on the
    /// PositionManager) and pay its share of pUSD.
    function redeem(bytes31 conditionId, uint256 outcomeIndex, uint256 amount) external {
        uint256 denominator = payoutDenominator[conditionId];
        require(denominator > 0, "Router: condition not resolved");
        positions.burn(msg.sender, positionId(conditionId, outcomeIndex), amount);
        uint256 payout = amount * _numerators[conditionId][outcomeIndex] / denominator;
        if (payout > 0) require(pusd.transfer(msg.sender, payout), "Router: payout failed");
        emit PositionRedeemed(msg.sender, conditionId, outcomeIndex, amount, payout);
    }
}
